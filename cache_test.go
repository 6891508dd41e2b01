package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tests of the cache run in testing/synctest bubbles over a fakeSite,
// as the pacer's do: time.Sleep moves the bubble's clock past a
// freshness, a back-off or 30 days of outage at once, and the fakeSite
// counts the fetches. They use only the transport's exported API.

// downExample answers down.example's robots.txt 503, every other
// origin's with allowAll.
func downExample(w http.ResponseWriter, r *http.Request) {
	if r.URL.Host == "down.example" {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, allowAll)
}

// TestForgottenOutageKeepsItsRetryAt checks that an origin whose
// robots.txt is unreachable, forgotten by the origin table and the
// default store as a broad crawl meets other origins, is refused without
// a fetch until its RetryAt, NextFree saying so too; the fetch after it
// doubles the back-off, as if the origin had never been forgotten.
func TestForgottenOutageKeepsItsRetryAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(downExample)
		const backoff = 10 * time.Minute
		tr := newBubbleTransport(site, Options{MaxOrigins: 2, MinBackoff: backoff})
		ctx := context.Background()
		fetches := func() int {
			n := 0
			for _, h := range site.robotsHits() {
				if strings.Contains(h.url, "//down.example/") {
					n++
				}
			}
			return n
		}
		check := func() *DisallowedError {
			t.Helper()
			de, ok := errors.AsType[*DisallowedError](tr.Check(ctx, "http://down.example/page"))
			if !ok {
				t.Fatal("down.example/page allowed; want it refused, its robots.txt unreachable")
			}
			return de
		}
		others := 0
		forget := func() {
			for range 40 {
				others++
				if err := tr.Check(ctx, fmt.Sprintf("http://site%d.example/", others)); err != nil {
					t.Fatal(err)
				}
			}
		}
		first := check()
		forget()
		if free, err := tr.NextFree(ctx, "http://down.example/page"); err != nil || free.Before(first.RetryAt) {
			t.Errorf("NextFree of the forgotten origin = %v, %v; want its RetryAt, %v", free, err, first.RetryAt)
		}
		again := check()
		if n := fetches(); n != 1 || !again.RetryAt.Equal(first.RetryAt) {
			t.Fatalf("forgotten, down.example's robots.txt fetched %d times and refused until %v; want once, until %v", n, again.RetryAt, first.RetryAt)
		}
		time.Sleep(time.Until(first.RetryAt))
		forget()
		third := check()
		if n, wait := fetches(), time.Until(third.RetryAt); n != 2 || wait != 2*backoff {
			t.Errorf("after its RetryAt, fetched %d times in all, next in %v; want twice, then in %v, the back-off doubled", n, wait, 2*backoff)
		}
		// Reachable again, the outage is over: forgotten and down once
		// more, the origin starts a new back-off.
		down := site.robots
		site.setRobots(serve(200, allowAll))
		time.Sleep(time.Until(third.RetryAt))
		if err := tr.Check(ctx, "http://down.example/page"); err != nil {
			t.Fatal(err)
		}
		site.setRobots(down)
		time.Sleep(DefaultFreshness)
		forget()
		if wait := time.Until(check().RetryAt); wait != backoff {
			t.Errorf("down again after it was reachable, refused for %v; want %v, a new back-off", wait, backoff)
		}
	})
}

// TestManyForgottenOutagesKeepTheirRetryAt checks that a crawl meeting
// many more unreachable origins than MaxOrigins at once, past 4 times as
// many, still refuses the first of them without a fetch until their
// RetryAt.
func TestManyForgottenOutagesKeepTheirRetryAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(serve(http.StatusServiceUnavailable, ""))
		const maxOrigins, unreachable = 300, 4500
		tr := newBubbleTransport(site, Options{MaxOrigins: maxOrigins, MinBackoff: time.Hour})
		ctx := context.Background()
		for i := range unreachable {
			if err := tr.Check(ctx, fmt.Sprintf("http://down%d.example/", i)); !errors.Is(err, ErrDisallowed) {
				t.Fatalf("down%d.example: %v, want refused", i, err)
			}
		}
		fetched := len(site.robotsHits())
		for i := range 10 {
			tr.Check(ctx, fmt.Sprintf("http://down%d.example/", i))
		}
		if n := len(site.robotsHits()) - fetched; n != 0 {
			t.Errorf("%d of the first 10 origins fetched again before their RetryAt, after %d unreachable origins; want none", n, unreachable)
		}
	})
}

// TestForgottenOutageFallsBackAfter30Days checks that an origin whose
// robots.txt was never reachable, forgotten between its retries as a
// broad crawl forgets, still falls back to allowing everything after 30
// days of outage, as one held throughout does.
func TestForgottenOutageFallsBackAfter30Days(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(downExample)
		// A retry a day, and enough other origins between two that the
		// origin table's admission forgets even an origin it met often.
		tr := newBubbleTransport(site, Options{MaxOrigins: 2, MinBackoff: 24 * time.Hour, MaxBackoff: 24 * time.Hour})
		ctx := context.Background()
		start, others := time.Now(), 0
		for {
			err := tr.Check(ctx, "http://down.example/page")
			if err == nil {
				break
			}
			de, ok := errors.AsType[*DisallowedError](err)
			if !ok {
				t.Fatal(err)
			}
			if time.Since(start) > 31*24*time.Hour {
				t.Fatalf("still refused after %v of outage: %v; want everything allowed after 30 days", time.Since(start), err)
			}
			for range 500 {
				others++
				tr.Check(ctx, fmt.Sprintf("http://site%d.example/", others))
			}
			time.Sleep(time.Until(de.RetryAt))
		}
		if d := time.Since(start); d < DefaultFallbackAfter {
			t.Errorf("allowed after %v of outage, want refused for %v", d, DefaultFallbackAfter)
		}
	})
}

// TestNextFreeStopsAtTheFallback checks that NextFree, for an origin
// whose robots.txt is unreachable and whose next retry comes after 30
// days of outage, answers the 30th day, when every request is allowed
// again, and not the retry.
func TestNextFreeStopsAtTheFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const day = 24 * time.Hour
		site := newFakeSite(serve(503, ""))
		tr := newBubbleTransport(site, Options{Freshness: 100 * time.Hour, MinBackoff: 50 * time.Hour, MaxBackoff: 50 * time.Hour})
		ctx := context.Background()
		start := time.Now()
		for {
			de, ok := errors.AsType[*DisallowedError](tr.Check(ctx, "http://site.example/page"))
			if !ok {
				t.Fatalf("%v into the outage: not refused as unreachable", time.Since(start))
			}
			if de.RetryAt.After(start.Add(30 * day)) {
				break
			}
			time.Sleep(time.Until(de.RetryAt))
		}
		if next, err := tr.NextFree(ctx, "http://site.example/page"); err != nil || !next.Equal(start.Add(30*day)) {
			t.Fatalf("NextFree = start + %v, %v; want the fallback, start + %v, before the retry", next.Sub(start), err, 30*day)
		}
		time.Sleep(time.Until(start.Add(30 * day)))
		if err := tr.Check(ctx, "http://site.example/page"); err != nil {
			t.Errorf("at the fallback: %v, want allowed", err)
		}
	})
}

// TestFallbackAfter30Days checks that an origin unreachable for 30 days
// falls back to its last good copy, or with none to allowing everything,
// and refuses everything until then (RFC 9309 section 2.3.1.4).
func TestFallbackAfter30Days(t *testing.T) {
	for _, tc := range []struct {
		name       string
		first      http.HandlerFunc // nil: unreachable from the start
		private    bool             // whether /private is allowed after 30 days
		wantPolicy bool
	}{
		{name: "last good copy parsed", first: serve(200, privateRobots), private: false, wantPolicy: true},
		{name: "last good copy unavailable", first: serve(404, ""), private: true},
		{name: "no good copy", private: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(serve(503, ""))
				tr := newBubbleTransport(site, Options{})
				ctx := context.Background()
				if tc.first != nil {
					site.setRobots(tc.first)
					if err := tr.Check(ctx, "http://site.example/public"); err != nil {
						t.Fatalf("before the outage: %v", err)
					}
					time.Sleep(DefaultFreshness)
					site.setRobots(serve(503, ""))
				}
				start := time.Now()
				// Thirty days written out, not read from the default, so
				// that a changed default fails here.
				const day = 24 * time.Hour
				// Requests keep coming through the outage, each retry due
				// fetching again, and are refused until the last hour of
				// day 30 is over.
				for time.Now().Before(start.Add(30*day - time.Hour)) {
					if err := tr.Check(ctx, "http://site.example/public"); !errors.Is(err, ErrDisallowed) {
						t.Fatalf("%v into the outage: %v, want refused", time.Since(start), err)
					}
					time.Sleep(time.Hour)
				}
				if d := time.Since(start); d != 30*day-time.Hour {
					t.Fatalf("the loop ended %v into the outage", d)
				}
				for _, at := range []time.Duration{30 * day, 31 * day} {
					time.Sleep(time.Until(start.Add(at)))
					if err := tr.Check(ctx, "http://site.example/public"); err != nil {
						t.Errorf("after %v: /public %v, want allowed", at, err)
					}
					err := tr.Check(ctx, "http://site.example/private")
					if tc.private != (err == nil) {
						t.Errorf("after %v: /private %v, want allowed=%v", at, err, tc.private)
					}
					info, _ := tr.Robots(ctx, "http://site.example/")
					if info.Outcome != Unreachable || !info.Fallback || (info.Policy != nil) != tc.wantPolicy || !info.UnreachableSince.Equal(start) {
						t.Errorf("after %v: Robots = %+v", at, info)
					}
					// What falls back is allowed now, retry or not.
					if next, err := tr.NextFree(ctx, "http://site.example/public"); err != nil || next.After(time.Now()) {
						t.Errorf("after %v: NextFree = now + %v, %v; want now: the fallback waits for no retry", at, time.Until(next), err)
					}
				}
			})
		})
	}
}

// TestFreshness checks that a robots.txt is reused for 24 hours, or a
// shorter Cache-Control max-age, and then fetched again (RFC 9309 section
// 2.4).
func TestFreshness(t *testing.T) {
	for _, tc := range []struct {
		name, cacheControl string
		ttl                time.Duration
	}{
		{"24 hours by default", "", 24 * time.Hour},
		{"shorter max-age honoured", "public, max-age=3600", time.Hour},
		{"longer max-age capped", "max-age=604800", 24 * time.Hour},
		{"invalid max-age ignored", "max-age=soon", 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					if tc.cacheControl != "" {
						w.Header().Set("Cache-Control", tc.cacheControl)
					}
					io.WriteString(w, privateRobots)
				})
				tr := newBubbleTransport(site, Options{})
				start := time.Now()
				check := func(want int) {
					t.Helper()
					if err := tr.Check(context.Background(), "http://site.example/page"); err != nil {
						t.Fatal(err)
					}
					if got := len(site.robotsHits()); got != want {
						t.Fatalf("at +%v: %d fetches, want %d", time.Since(start), got, want)
					}
				}
				check(1)
				time.Sleep(tc.ttl - time.Second)
				check(1)
				time.Sleep(time.Second)
				check(2)
			})
		})
	}
}

// TestFreshnessCountsFromTheRequest checks that a robots.txt's lifetime
// counts from when its fetch began, as an HTTP cache counts a response's
// age (RFC 9111 section 4.2.3): one that took ten seconds to arrive with
// max-age=60 is fetched again 60 seconds after it was asked for, not 70,
// and a 304 renews it the same way; yet never sooner than MinFreshness
// after it arrived, however long it took.
func TestFreshnessCountsFromTheRequest(t *testing.T) {
	for _, tc := range []struct {
		name, cacheControl string
		minFresh           time.Duration
		want               []time.Duration
	}{
		// Asked at 0, answered at 10; due at 60, asked then (a 304) and
		// answered at 70; due at 120.
		{"max-age", "max-age=60", time.Second, []time.Duration{0, time.Minute, 2 * time.Minute}},
		// Answered at 10, past the floor counted from the request (5):
		// due 5 after the answer.
		{"no-cache below the floor", "no-cache", 5 * time.Second, []time.Duration{0, 15 * time.Second, 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(10 * time.Second)
					w.Header().Set("Cache-Control", tc.cacheControl)
					w.Header().Set("ETag", `"v1"`)
					if r.Header.Get("If-None-Match") == `"v1"` {
						w.WriteHeader(http.StatusNotModified)
						return
					}
					io.WriteString(w, privateRobots)
				})
				tr := newBubbleTransport(site, Options{MinFreshness: tc.minFresh})
				start := time.Now()
				for time.Since(start) < 3*time.Minute {
					if err := tr.Check(context.Background(), "http://site.example/page"); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Second)
				}
				got := hitTimes(site.robotsHits(), start)
				if !slices.Equal(got[:min(len(got), len(tc.want))], tc.want) {
					t.Errorf("robots.txt asked at %v, want %v first", got, tc.want)
				}
			})
		})
	}
}

// TestBackoff checks the retry schedule of an unreachable robots.txt:
// the first retry within minutes, doubling, capped at MaxBackoff and never
// past the 24-hour freshness, with requests in between refused without a
// fetch.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxBackoff time.Duration
		want       []time.Duration
	}{
		{"doubling up to the default cap", 0, []time.Duration{
			time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute,
			64 * time.Minute, 128 * time.Minute, 4 * time.Hour, 4 * time.Hour}},
		{"never past the freshness", 100 * time.Hour, []time.Duration{
			time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute,
			64 * time.Minute, 128 * time.Minute, 256 * time.Minute, 512 * time.Minute, 1024 * time.Minute,
			24 * time.Hour, 24 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(serve(500, ""))
				tr := newBubbleTransport(site, Options{MaxBackoff: tc.maxBackoff})
				ctx := context.Background()
				for i, want := range tc.want {
					var de *DisallowedError
					if err := tr.Check(ctx, "http://site.example/x"); !errors.As(err, &de) {
						t.Fatalf("retry %d: %v, want refused", i, err)
					}
					if got := time.Until(de.RetryAt); got != want {
						t.Fatalf("retry %d: next retry in %v, want %v", i, got, want)
					}
					fetches := len(site.robotsHits())
					time.Sleep(want - time.Second)
					if err := tr.Check(ctx, "http://site.example/x"); !errors.Is(err, ErrDisallowed) || len(site.robotsHits()) != fetches {
						t.Fatalf("retry %d: before the retry time: %v after %d fetches, want refused without one", i, err, len(site.robotsHits())-fetches)
					}
					time.Sleep(time.Second)
				}
			})
		})
	}
	t.Run("Retry-After lengthens the first retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "900")
				w.WriteHeader(503)
			})
			tr := newBubbleTransport(site, Options{})
			var de *DisallowedError
			if err := tr.Check(context.Background(), "http://site.example/x"); !errors.As(err, &de) || time.Until(de.RetryAt) != 15*time.Minute {
				t.Fatalf("Check = %v, want a retry in 15m", err)
			}
		})
	})
	t.Run("a shorter Retry-After keeps MinBackoff", func(t *testing.T) {
		// As Options.MinBackoff says: a failing robots.txt is not
		// fetched again sooner than MinBackoff, whatever it asks.
		synctest.Test(t, func(t *testing.T) {
			site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(503)
			})
			tr := newBubbleTransport(site, Options{MinBackoff: 2 * time.Minute})
			var de *DisallowedError
			if err := tr.Check(context.Background(), "http://site.example/x"); !errors.As(err, &de) || time.Until(de.RetryAt) != 2*time.Minute {
				t.Fatalf("Check = %v, want a retry in 2m", err)
			}
		})
	})
	t.Run("one retry at a time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var fail atomic.Bool
			fail.Store(true)
			site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
				if fail.Load() {
					w.WriteHeader(503)
					return
				}
				hold(r, release)
				io.WriteString(w, privateRobots)
			})
			tr := newBubbleTransport(site, Options{})
			tr.Check(context.Background(), "http://site.example/x")
			fail.Store(false)
			time.Sleep(time.Hour)
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for range 50 {
				wg.Go(func() { errs <- tr.Check(context.Background(), "http://site.example/x") })
			}
			// Every Check has started and waits: on the retry under way,
			// which is held, or for nothing else.
			synctest.Wait()
			if got := len(site.robotsHits()); got != 2 {
				t.Errorf("%d fetches while the retry is under way, want 2 (one failure, one retry)", got)
			}
			close(release)
			bubbleWaitGroup(t, &wg, "every Check to return")
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("after the retry: %v", err)
				}
			}
			if got := len(site.robotsHits()); got != 2 {
				t.Errorf("%d fetches, want 2 (one failure, one retry)", got)
			}
		})
	})
}

// TestRevalidation checks that a stale robots.txt is fetched again with
// its validators and that a 304 keeps the stored copy.
func TestRevalidation(t *testing.T) {
	for _, tc := range []struct {
		name, header, value, conditional string
	}{
		{"ETag", "ETag", `"v1"`, "If-None-Match"},
		{"Last-Modified", "Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT", "If-Modified-Since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set(tc.header, tc.value)
					// Freshness headers that would make httpcache answer
					// from its own cache by its clock.
					w.Header().Set("Cache-Control", "max-age=86400")
					if r.Header.Get(tc.conditional) != "" {
						w.WriteHeader(http.StatusNotModified)
						return
					}
					io.WriteString(w, privateRobots)
				})
				tr := newBubbleTransport(site, Options{})
				ctx := context.Background()
				tr.Check(ctx, "http://site.example/private")
				time.Sleep(DefaultFreshness)
				if err := tr.Check(ctx, "http://site.example/private"); !errors.Is(err, ErrDisallowed) {
					t.Errorf("after revalidation: /private %v, want still refused", err)
				}
				hits := site.robotsHits()
				if len(hits) != 2 || hits[1].header.Get(tc.conditional) != tc.value {
					t.Fatalf("%d fetches, the second with %s %q; want 2 and %s", len(hits), tc.conditional, hits[len(hits)-1].header.Get(tc.conditional), tc.value)
				}
				if st := tr.Stats(); st.Revalidated != 1 || st.Fetches[Parsed] != 2 {
					t.Errorf("Stats = %+v, want 2 parsed fetches, 1 revalidated", st)
				}
				info, _ := tr.Robots(ctx, "http://site.example/")
				if want := time.Now().Add(DefaultFreshness); !info.Expires.Equal(want) {
					t.Errorf("Expires = %v, want %v, 24h after the revalidation", info.Expires, want)
				}
			})
		})
	}
	t.Run("changed file replaces the rules", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var version atomic.Int64
			site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"v`+string(rune('0'+version.Load()))+`"`)
				io.WriteString(w, []string{privateRobots, "User-agent: *\nDisallow: /other\n"}[version.Load()])
			})
			tr := newBubbleTransport(site, Options{})
			ctx := context.Background()
			tr.Check(ctx, "http://site.example/private")
			version.Store(1)
			time.Sleep(DefaultFreshness)
			if err := tr.Check(ctx, "http://site.example/private"); err != nil {
				t.Errorf("/private under the new file: %v", err)
			}
			if err := tr.Check(ctx, "http://site.example/other"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("/other under the new file: %v", err)
			}
		})
	})
	t.Run("stale-if-error does not hide a 5xx", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var fail atomic.Bool
			site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"v1"`)
				w.Header().Set("Cache-Control", "max-age=60, stale-if-error=86400")
				if fail.Load() {
					w.WriteHeader(500)
					return
				}
				io.WriteString(w, privateRobots)
			})
			tr := newBubbleTransport(site, Options{})
			tr.Check(context.Background(), "http://site.example/x")
			fail.Store(true)
			time.Sleep(time.Minute)
			if info, _ := tr.Robots(context.Background(), "http://site.example/"); info.Outcome != Unreachable {
				t.Errorf("after a 500: %v, want unreachable", info.Outcome)
			}
			if n := len(site.robotsHits()); n != 2 {
				t.Errorf("%d fetches, want 2: the 500 was answered from a cache", n)
			}
		})
	})
}

// TestNotModifiedBodyClosed checks the guard under httpcache, which
// drops the network body of a 304 without closing it.
func TestNotModifiedBodyClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var notModified *trackedBody
		var calls atomic.Int64
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Etag": {`"v1"`}}
			if calls.Add(1) == 1 {
				return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(privateRobots)), Request: r}, nil
			}
			if r.Header.Get("If-None-Match") != `"v1"` {
				t.Errorf("revalidation without If-None-Match")
			}
			notModified = newTrackedBody("")
			return &http.Response{StatusCode: http.StatusNotModified, Header: h, Body: notModified, Request: r}, nil
		})
		tr := NewTransport(base, Options{})
		tr.Check(context.Background(), "http://site.example/x")
		time.Sleep(DefaultFreshness)
		if err := tr.Check(context.Background(), "http://site.example/private"); !errors.Is(err, ErrDisallowed) {
			t.Fatalf("after the 304: %v, want refused by the stored copy", err)
		}
		if calls.Load() != 2 {
			t.Fatalf("%d robots.txt requests, want 2: the test does not reach its 304", calls.Load())
		}
		if notModified == nil || !notModified.closed.Load() {
			t.Errorf("the 304's body was not closed")
		}
	})
}

// TestRenewalParsesOnce checks that the renewal of a stale robots.txt
// that finds a newer record in the store, stored by another transport
// sharing it, takes that record without fetching, and parses its body
// only when it is not the body the transport already holds parsed: the
// same body keeps the earlier parse (the same *policy.Robots), another is
// parsed and decides.
func TestRenewalParsesOnce(t *testing.T) {
	disallowAll := "User-agent: *\nDisallow: /\n"
	for _, tc := range []struct {
		name, stored string
		wantSame     bool
	}{
		{"same body keeps the state's parse", privateRobots, true},
		{"another body is parsed", disallowAll, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := NewMemoryCache(16, DefaultCacheBytes)
				mine, theirs := newFakeSite(serve(200, privateRobots)), newFakeSite(serve(200, tc.stored))
				tr := newBubbleTransport(mine, Options{Cache: store})
				other := newBubbleTransport(theirs, Options{Cache: store})
				ctx := context.Background()
				before, err := tr.Robots(ctx, "http://site.example/")
				if err != nil || before.Policy == nil {
					t.Fatalf("Robots = %+v, %v; want the parsed file", before, err)
				}
				time.Sleep(DefaultFreshness)
				// Another writer renews the stale record first and stores
				// a newer, fresh one.
				if _, err := other.Robots(ctx, "http://site.example/"); err != nil {
					t.Fatal(err)
				}
				if n := len(theirs.robotsHits()); n != 1 {
					t.Fatalf("the other transport fetched %d times, want once: the test does not reach its case", n)
				}
				after, err := tr.Robots(ctx, "http://site.example/")
				if err != nil {
					t.Fatal(err)
				}
				if n := len(mine.robotsHits()); n != 1 {
					t.Errorf("the renewal fetched (%d fetches in all); want the stored record", n)
				}
				if !after.FetchedAt.Equal(time.Now()) || string(after.Body) != tc.stored {
					t.Fatalf("renewed to the record fetched at %v with %q; want the stored one, fetched now", after.FetchedAt, after.Body)
				}
				if same := after.Policy == before.Policy; same != tc.wantSame {
					t.Errorf("kept the earlier parse: %v, want %v", same, tc.wantSame)
				}
				if after.Policy == nil || after.Policy.Agent("ExampleBot").Allowed("/public") != tc.wantSame {
					t.Errorf("parse %v does not decide as the stored body %q", after.Policy, tc.stored)
				}
				if err := tr.Check(ctx, "http://site.example/public"); (err == nil) != tc.wantSame {
					t.Errorf("/public after the renewal: %v, want allowed=%v", err, tc.wantSame)
				}
			})
		})
	}
}
