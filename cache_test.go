package robots

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots/policy"
)

// TestFallbackAfter30Days checks that an origin unreachable for 30 days
// falls back to its last good copy, or with none to allowing everything,
// and refuses everything until then (RFC 9309 section 2.3.1.4).
func TestFallbackAfter30Days(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first       http.HandlerFunc // nil: unreachable from the start
		private     bool             // whether /private is allowed after 30 days
		wantPolicy  bool
		wantOutcome Outcome
	}{
		{name: "last good copy parsed", first: serve(200, privateRobots), private: false, wantPolicy: true},
		{name: "last good copy unavailable", first: serve(404, ""), private: true},
		{name: "no good copy", private: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, serve(503, ""))
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			ctx := context.Background()
			if tc.first != nil {
				s.setRobots(tc.first)
				if err := tr.Check(ctx, s.URL+"/public"); err != nil {
					t.Fatalf("before the outage: %v", err)
				}
				c.Advance(DefaultFreshness)
				s.setRobots(serve(503, ""))
			}
			start := c.Now()
			// Thirty days written out, not read from the default, so that
			// a changed default fails here.
			const day = 24 * time.Hour
			// Requests keep coming through the outage, each retry due
			// fetching again, and are refused until the last hour of day
			// 30 is over.
			for c.Now().Before(start.Add(30*day - time.Hour)) {
				if err := tr.Check(ctx, s.URL+"/public"); !errors.Is(err, ErrDisallowed) {
					t.Fatalf("%v into the outage: %v, want refused", c.Now().Sub(start), err)
				}
				c.Advance(time.Hour)
			}
			if d := c.Now().Sub(start); d != 30*day-time.Hour {
				t.Fatalf("the loop ended %v into the outage", d)
			}
			for _, at := range []time.Duration{30 * day, 31 * day} {
				c.Advance(start.Add(at).Sub(c.Now()))
				if err := tr.Check(ctx, s.URL+"/public"); err != nil {
					t.Errorf("after %v: /public %v, want allowed", at, err)
				}
				err := tr.Check(ctx, s.URL+"/private")
				if tc.private != (err == nil) {
					t.Errorf("after %v: /private %v, want allowed=%v", at, err, tc.private)
				}
				info, _ := tr.Robots(ctx, s.URL)
				if info.Outcome != Unreachable || !info.Fallback || (info.Policy != nil) != tc.wantPolicy || !info.UnreachableSince.Equal(start) {
					t.Errorf("after %v: Robots = %+v", at, info)
				}
			}
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
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.cacheControl != "" {
					w.Header().Set("Cache-Control", tc.cacheControl)
				}
				io.WriteString(w, privateRobots)
			})
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			check := func(want int64) {
				t.Helper()
				if err := tr.Check(context.Background(), s.URL+"/page"); err != nil {
					t.Fatal(err)
				}
				if got := s.robotsHits.Load(); got != want {
					t.Fatalf("at +%v: %d fetches, want %d", c.Now().Sub(newClock().Now()), got, want)
				}
			}
			check(1)
			c.Advance(tc.ttl - time.Second)
			check(1)
			c.Advance(time.Second)
			check(2)
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
			s := newSite(t, serve(500, ""))
			c := newClock()
			tr := newTestTransport(t, c, Options{MaxBackoff: tc.maxBackoff})
			ctx := context.Background()
			for i, want := range tc.want {
				var de *DisallowedError
				if err := tr.Check(ctx, s.URL+"/x"); !errors.As(err, &de) {
					t.Fatalf("retry %d: %v, want refused", i, err)
				}
				if got := de.RetryAt.Sub(c.Now()); got != want {
					t.Fatalf("retry %d: next retry in %v, want %v", i, got, want)
				}
				fetches := s.robotsHits.Load()
				c.Advance(want - time.Second)
				if err := tr.Check(ctx, s.URL+"/x"); !errors.Is(err, ErrDisallowed) || s.robotsHits.Load() != fetches {
					t.Fatalf("retry %d: before the retry time: %v after %d fetches, want refused without one", i, err, s.robotsHits.Load()-fetches)
				}
				c.Advance(time.Second)
			}
		})
	}
	t.Run("Retry-After lengthens the first retry", func(t *testing.T) {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "900")
			w.WriteHeader(503)
		})
		c := newClock()
		tr := newTestTransport(t, c, Options{})
		var de *DisallowedError
		if err := tr.Check(context.Background(), s.URL+"/x"); !errors.As(err, &de) || de.RetryAt.Sub(c.Now()) != 15*time.Minute {
			t.Fatalf("Check = %v, want a retry in 15m", err)
		}
	})
	t.Run("one retry at a time", func(t *testing.T) {
		release := make(chan struct{})
		var fail atomic.Bool
		fail.Store(true)
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if fail.Load() {
				w.WriteHeader(503)
				return
			}
			hold(r, release)
			io.WriteString(w, privateRobots)
		})
		c := newClock()
		tr := newTestTransport(t, c, Options{})
		tr.Check(context.Background(), s.URL+"/x")
		fail.Store(false)
		c.Advance(time.Hour)
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Go(func() { errs <- tr.Check(context.Background(), s.URL+"/x") })
		}
		// Release the retry once it is under way; the others are either
		// waiting on it or not yet started, and neither may fetch.
		waitFor(t, "the retry to start", func() bool { return s.robotsHits.Load() >= 2 })
		close(release)
		waitGroup(t, &wg, "every Check to return")
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("after the retry: %v", err)
			}
		}
		if got := s.robotsHits.Load(); got != 2 {
			t.Errorf("%d fetches, want 2 (one failure, one retry)", got)
		}
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
			var conditional atomic.Value
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(tc.header, tc.value)
				// Freshness headers that would make httpcache answer
				// from its own cache by the wall clock.
				w.Header().Set("Cache-Control", "max-age=86400")
				if v := r.Header.Get(tc.conditional); v != "" {
					conditional.Store(v)
					w.WriteHeader(http.StatusNotModified)
					return
				}
				io.WriteString(w, privateRobots)
			})
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			ctx := context.Background()
			tr.Check(ctx, s.URL+"/private")
			c.Advance(DefaultFreshness)
			if err := tr.Check(ctx, s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("after revalidation: /private %v, want still refused", err)
			}
			if s.robotsHits.Load() != 2 || conditional.Load() != tc.value {
				t.Errorf("%d fetches, %s %v; want 2 and %s", s.robotsHits.Load(), tc.conditional, conditional.Load(), tc.value)
			}
			if st := tr.Stats(); st.Revalidated != 1 || st.Fetches[Parsed] != 2 {
				t.Errorf("Stats = %+v, want 2 parsed fetches, 1 revalidated", st)
			}
			info, _ := tr.Robots(ctx, s.URL)
			if !info.Expires.Equal(c.Now().Add(DefaultFreshness)) {
				t.Errorf("Expires = %v, want 24h after the revalidation", info.Expires)
			}
		})
	}
	t.Run("changed file replaces the rules", func(t *testing.T) {
		var version atomic.Int64
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v`+string(rune('0'+version.Load()))+`"`)
			io.WriteString(w, []string{privateRobots, "User-agent: *\nDisallow: /other\n"}[version.Load()])
		})
		c := newClock()
		tr := newTestTransport(t, c, Options{})
		ctx := context.Background()
		tr.Check(ctx, s.URL+"/private")
		version.Store(1)
		c.Advance(DefaultFreshness)
		if err := tr.Check(ctx, s.URL+"/private"); err != nil {
			t.Errorf("/private under the new file: %v", err)
		}
		if err := tr.Check(ctx, s.URL+"/other"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("/other under the new file: %v", err)
		}
	})
	t.Run("stale-if-error does not hide a 5xx", func(t *testing.T) {
		var fail atomic.Bool
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Cache-Control", "max-age=60, stale-if-error=86400")
			if fail.Load() {
				w.WriteHeader(500)
				return
			}
			io.WriteString(w, privateRobots)
		})
		c := newClock()
		tr := newTestTransport(t, c, Options{})
		tr.Check(context.Background(), s.URL+"/x")
		fail.Store(true)
		c.Advance(time.Minute)
		if info, _ := tr.Robots(context.Background(), s.URL); info.Outcome != Unreachable {
			t.Errorf("after a 500: %v, want unreachable", info.Outcome)
		}
	})
}

// TestNotModifiedBodyClosed checks the guard under httpcache, which
// drops the network body of a 304 without closing it.
func TestNotModifiedBodyClosed(t *testing.T) {
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
	c := newClock()
	tr := NewTransport(base, Options{Now: c.Now, Sleep: c.Sleep})
	tr.Check(context.Background(), "http://site.example/x")
	c.Advance(DefaultFreshness)
	if err := tr.Check(context.Background(), "http://site.example/private"); !errors.Is(err, ErrDisallowed) {
		t.Fatalf("after the 304: %v, want refused by the stored copy", err)
	}
	if notModified == nil || !notModified.closed.Load() {
		t.Errorf("the 304's body was not closed")
	}
}

// TestRenewalParsesOnce checks that the renewal parses the body of a
// record it reads from the store only when it is not the body its state
// already holds parsed: the same body keeps the earlier parse, another
// is parsed and decides.
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
			c := newClock()
			cfg := newConfig(Options{Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
			base := rtFunc(func(*http.Request) (*http.Response, error) {
				t.Error("the renewal fetched; want the stored record")
				return nil, errors.New("unexpected")
			})
			store := NewMemoryCache(16, DefaultCacheBytes)
			var cache robotsCache
			cache.init(&cfg, store, nil, base, c.Now, c.Sleep, &counters{})
			o := cache.originFor(originID{host: "site.example"})
			body := []byte(privateRobots)
			prev := newState(record{Outcome: Parsed, Body: body, FetchedAt: c.Now().Add(-time.Hour), Expires: c.Now()}, nil, parsedBody{body, policy.Parse(body)})
			o.st.Store(prev)
			// Another writer stored a newer, fresh record.
			stored := freshRecord(c.Now())
			stored.Body = []byte(tc.stored)
			store.Set(plainKey(RecordKey{Origin: o.key}), stored.encode())

			st := cache.renew(context.Background(), o)
			if !st.rec.FetchedAt.Equal(c.Now()) || string(st.rec.Body) != tc.stored {
				t.Fatalf("record %+v; want the stored one", st.rec)
			}
			if same := st.robots == prev.robots; same != tc.wantSame {
				t.Errorf("kept the state's parse: %v, want %v", same, tc.wantSame)
			}
			if st.robots == nil || st.robots.Allowed("/public", "ExampleBot") != tc.wantSame {
				t.Errorf("parse %v does not decide as the stored body %q", st.robots, tc.stored)
			}
		})
	}
}
