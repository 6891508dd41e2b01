package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crawlkit/robots/policy"
)

// TestPoliteness checks the spacing of requests to one origin: the
// minimum delay, raised by Crawl-delay up to its cap, measured on the
// injected clock.
func TestPoliteness(t *testing.T) {
	for _, tc := range []struct {
		name    string
		robots  string
		opts    Options
		waits   []time.Duration // of the second and third requests
		elapsed time.Duration   // between the requests, on the clock
	}{
		{name: "default minimum delay", robots: privateRobots, opts: Options{MinDelay: 0},
			waits: []time.Duration{time.Second, time.Second}},
		{name: "configured minimum delay", robots: privateRobots, opts: Options{MinDelay: 3 * time.Second},
			waits: []time.Duration{3 * time.Second, 3 * time.Second}},
		{name: "negative minimum delay means none", robots: privateRobots, opts: Options{MinDelay: -1}},
		{name: "Crawl-delay raises the delay", robots: "User-agent: *\nCrawl-delay: 5\n", opts: Options{MinDelay: -1},
			waits: []time.Duration{5 * time.Second, 5 * time.Second}},
		{name: "Crawl-delay below the minimum does not lower it", robots: "User-agent: *\nCrawl-delay: 1\n", opts: Options{MinDelay: 2 * time.Second},
			waits: []time.Duration{2 * time.Second, 2 * time.Second}},
		{name: "Crawl-delay capped", robots: "User-agent: *\nCrawl-delay: 3600\n", opts: Options{MinDelay: -1, MaxCrawlDelay: 10 * time.Second},
			waits: []time.Duration{10 * time.Second, 10 * time.Second}},
		{name: "Crawl-delay above a million seconds capped, not dropped", robots: "User-agent: *\nCrawl-delay: 2000000\n", opts: Options{MinDelay: -1, MaxCrawlDelay: 10 * time.Second},
			waits: []time.Duration{10 * time.Second, 10 * time.Second}},
		{name: "Crawl-delay ignored", robots: "User-agent: *\nCrawl-delay: 5\n", opts: Options{MinDelay: -1, MaxCrawlDelay: -1}},
		{name: "Crawl-delay of another group ignored", robots: "User-agent: OtherBot\nCrawl-delay: 5\n", opts: Options{MinDelay: -1}},
		{name: "time already passed counts", robots: "User-agent: *\nCrawl-delay: 5\n", opts: Options{MinDelay: -1},
			elapsed: 2 * time.Second, waits: []time.Duration{3 * time.Second, 3 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, serve(200, tc.robots))
			c := newClock()
			opts := tc.opts
			opts.UserAgent, opts.Now, opts.Sleep = "ExampleBot", c.Now, c.Sleep
			tr := NewTransport(nil, opts)
			t.Cleanup(tr.CloseIdleConnections)
			for i := range 3 {
				if _, err := getWithin(t, tr, s.URL+fmt.Sprintf("/page%d", i)); err != nil {
					t.Fatal(err)
				}
				c.Advance(tc.elapsed)
			}
			if got := c.Waits(); !slices.Equal(got, tc.waits) {
				t.Errorf("waits %v, want %v", got, tc.waits)
			}
			var total time.Duration
			for _, w := range tc.waits {
				total += w
			}
			if got := tr.Stats().Waited; got != total {
				t.Errorf("Stats().Waited = %v, want %v", got, total)
			}
		})
	}
}

// TestRetryAfterPauses checks that a 429 or 503 with Retry-After, in
// seconds or as an HTTP date, pauses the origin.
func TestRetryAfterPauses(t *testing.T) {
	start := newClock().Now()
	for _, tc := range []struct {
		name, retryAfter string
		status           int
		want             time.Duration
	}{
		{"503 seconds", "120", 503, 120 * time.Second},
		{"429 seconds", "30", 429, 30 * time.Second},
		{"HTTP date", start.Add(10 * time.Minute).Format(http.TimeFormat), 503, 10 * time.Minute},
		{"date in the past", start.Add(-time.Hour).Format(http.TimeFormat), 503, 0},
		{"capped at MaxBackoff", "999999999", 503, DefaultMaxBackoff},
		{"unreadable", "soon", 503, 0},
		{"other status", "120", 500, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, serve(200, ""))
			var answered atomic.Bool
			s.setPages(func(w http.ResponseWriter, r *http.Request) {
				if !answered.Swap(true) {
					w.Header().Set("Retry-After", tc.retryAfter)
					w.WriteHeader(tc.status)
				}
			})
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			for range 2 {
				if _, err := getWithin(t, tr, s.URL+"/page"); err != nil {
					t.Fatal(err)
				}
			}
			var waits []time.Duration
			if tc.want > 0 {
				waits = []time.Duration{tc.want}
			}
			if got := c.Waits(); !slices.Equal(got, waits) {
				t.Errorf("waits %v, want %v", got, waits)
			}
			// Only a pause that holds anything back is counted.
			var pauses int64
			if tc.want > 0 {
				pauses = 1
			}
			if got := tr.Stats().Pauses[tc.status]; got != pauses {
				t.Errorf("Stats().Pauses[%d] = %d, want %d", tc.status, got, pauses)
			}
		})
	}
}

// TestWaitHonoursContext checks that a request waiting for its slot on
// the real timer returns its context's error when the context ends, and
// gives the slot back.
func TestWaitHonoursContext(t *testing.T) {
	s := newSite(t, serve(200, ""))
	tr := NewTransport(nil, Options{MinDelay: time.Hour})
	t.Cleanup(tr.CloseIdleConnections)
	if _, err := getWithin(t, tr, s.URL+"/first"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(50*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/second", nil)
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("RoundTrip = %v, want context.Canceled itself", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait ignored its context")
	}
	if s.pageHits.Load() != 1 {
		t.Errorf("%d pages requested, want 1", s.pageHits.Load())
	}
	if w := tr.Stats().Waited; w <= 0 || w > time.Hour {
		t.Errorf("Waited = %v, want the time spent before the cancel", w)
	}
}

// TestArrivalOrderThroughARenewal checks that requests arriving while
// their origin's robots.txt is fetched, for the first time or again once
// due, are sent in the order they came, alone and in a fleet, and that
// one the robots.txt refuses holds none of the others back.
func TestArrivalOrderThroughARenewal(t *testing.T) {
	const (
		delay   = 50 * time.Millisecond
		fetch   = 300 * time.Millisecond // the robots.txt's answer takes this long
		apart   = 20 * time.Millisecond  // between two arrivals
		arrived = 6
	)
	for _, tc := range []struct {
		name  string
		fleet bool
		again bool // the robots.txt is held, and due
	}{
		{"the first fetch", false, false},
		{"the first fetch, in a fleet", true, false},
		{"a refresh", false, true},
		{"a refresh, in a fleet", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var slow atomic.Bool
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					if slow.Load() {
						time.Sleep(fetch)
					}
					w.Header().Set("Cache-Control", "max-age=60")
					w.Write([]byte("User-agent: *\nDisallow: /r2\n"))
				})
				opts := Options{UserAgent: "ExampleBot", MinDelay: delay}
				if tc.fleet {
					opts.Fleet = NewMemoryFleet()
				}
				tr := NewTransport(site, opts)
				if tc.again {
					if err := tr.Check(context.Background(), "http://site.example/"); err != nil {
						t.Fatal(err)
					}
					time.Sleep(2 * time.Minute)
				}
				slow.Store(true)
				var wg sync.WaitGroup
				for i := range arrived {
					wg.Go(func() {
						_, err := bubbleGet(t, tr, fmt.Sprintf("http://site.example/r%d", i))
						switch {
						case i == 2 && !errors.Is(err, ErrDisallowed):
							t.Errorf("/r2 = %v, want it refused", err)
						case i != 2 && err != nil:
							t.Errorf("/r%d: %v", i, err)
						}
					})
					time.Sleep(apart)
				}
				bubbleWaitGroup(t, &wg, "the requests")
				var got []string
				for _, h := range site.pageHits() {
					got = append(got, strings.TrimPrefix(h.url, "http://site.example"))
				}
				want := []string{"/r0", "/r1", "/r3", "/r4", "/r5"}
				if !slices.Equal(got, want) {
					t.Errorf("sent in the order %v, want the order of arrival %v", got, want)
				}
			})
		})
	}
}

// TestNoRobotsFetchDuringAPause checks that a robots.txt that comes due
// during a Retry-After's pause is fetched only once the pause is over, by
// the member that received it and by another member of its fleet, and
// that a request waiting through the pause is decided on the copy
// fetched then: refused by it, it is never sent.
func TestNoRobotsFetchDuringAPause(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration // MinDelay; negative: unpaced
		other bool          // asked of a fleet member the 429 did not reach
	}{
		{"paced", time.Second, false},
		{"unpaced", -1, false},
		{"paced, another member", time.Second, true},
		{"unpaced, another member", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const pause = 2 * time.Minute
				var disallow atomic.Bool
				site := pausingSite(pause, &disallow, "User-agent: *\nDisallow: /page\n", "/busy")
				opts := Options{UserAgent: "ExampleBot", MinDelay: tc.delay}
				if tc.other {
					opts.Fleet = NewMemoryFleet()
				}
				tr := NewTransport(site, opts)
				asker, pages := tr, 1
				if tc.other {
					asker = NewTransport(site, opts)
					if _, err := bubbleGet(t, asker, "http://site.example/warm"); err != nil {
						t.Fatal(err)
					}
					pages++
					time.Sleep(time.Second)
				}
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://site.example/busy"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(70 * time.Second) // the robots.txt is due, the pause still on
				disallow.Store(true)
				if _, err := bubbleGet(t, asker, "http://site.example/page"); !errors.Is(err, ErrDisallowed) {
					t.Errorf("the request waiting through the pause = %v, want it refused by the robots.txt fetched after it", err)
				}
				hits := site.robotsHits()
				if len(hits) != 2 {
					t.Fatalf("%d robots.txt fetches, want 2", len(hits))
				}
				if at := hits[1].at.Sub(start); at < pause {
					t.Errorf("the robots.txt was fetched again %v after the 429, within its pause of %v", at, pause)
				}
				if n := len(site.pageHits()); n != pages {
					t.Errorf("%d pages sent, want %d: none after /busy", n, pages)
				}
			})
		})
	}
}

// pausingSite returns a fakeSite whose robots.txt, fresh for a minute,
// allows everything until changed is set and is then changedTo, and whose
// pages at busy (every page when busy is "") answer 429 with a
// Retry-After of pause.
func pausingSite(pause time.Duration, changed *atomic.Bool, changedTo, busy string) *fakeSite {
	site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		if changed.Load() {
			w.Write([]byte(changedTo))
			return
		}
		w.Write([]byte(allowAll))
	})
	site.setPages(func(w http.ResponseWriter, r *http.Request) {
		if busy == "" || r.URL.Path == busy {
			w.Header().Set("Retry-After", strconv.Itoa(int(pause.Seconds())))
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	return site
}

// TestNoRobotsFetchDuringAPauseForAQuestion checks that Check, Robots and
// Preferences, asked while the origin's robots.txt is due during a
// Retry-After pause (this process's, or one another member stored),
// answer on the copy held and fetch nothing: the fetch, a request to the
// origin, waits for the pause to end, and the first question after it
// gets the copy then fetched.
func TestNoRobotsFetchDuringAPauseForAQuestion(t *testing.T) {
	questions := []struct {
		name string
		ask  func(tr *Transport) (refused bool, err error)
	}{
		{"Check", func(tr *Transport) (bool, error) {
			err := tr.Check(context.Background(), "http://site.example/page")
			if errors.Is(err, ErrDisallowed) {
				return true, nil
			}
			return false, err
		}},
		{"Robots", func(tr *Transport) (bool, error) {
			info, err := tr.Robots(context.Background(), "http://site.example/page")
			return info.Policy != nil && !info.Policy.Agent("ExampleBot").Allowed("/page"), err
		}},
		{"Preferences", func(tr *Transport) (bool, error) {
			prefs, err := tr.Preferences(context.Background(), "http://site.example/page")
			return prefs.Disallowed || prefs.Label("train-ai").Usage == policy.UsageDisallowed, err
		}},
	}
	for _, q := range questions {
		for _, other := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/another member %v", q.name, other), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					const pause = 2 * time.Minute
					var changed atomic.Bool
					site := pausingSite(pause, &changed, "User-agent: *\nDisallow: /page\nContent-Usage: train-ai=n\n", "")
					opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second}
					if other {
						opts.Fleet = NewMemoryFleet()
					}
					tr := NewTransport(site, opts)
					asker := tr
					if other {
						asker = NewTransport(site, opts)
						if _, err := q.ask(asker); err != nil { // holds the copy
							t.Fatal(err)
						}
					}
					start := time.Now()
					if _, err := bubbleGet(t, tr, "http://site.example/busy"); err != nil {
						t.Fatal(err)
					}
					time.Sleep(70 * time.Second) // the robots.txt is due, the pause still on
					changed.Store(true)
					if refused, err := q.ask(asker); err != nil || refused {
						t.Errorf("during the pause: refused %v, err %v; want the held copy's answer", refused, err)
					}
					if n := len(site.robotsHits()); n != 1 {
						t.Errorf("%d robots.txt fetches during the pause, want 1, the first", n)
					}
					time.Sleep(time.Until(start.Add(pause)))
					if refused, err := q.ask(asker); err != nil || !refused {
						t.Errorf("after the pause: refused %v, err %v; want the answer of the copy fetched then", refused, err)
					}
					if hits := site.robotsHits(); len(hits) != 2 || hits[1].at.Sub(start) < pause {
						t.Errorf("robots.txt fetched at %v; want once more, after the pause of %v", hitTimes(hits, start), pause)
					}
				})
			})
		}
	}
}

// recordlessFleet is a MemoryFleet that keeps no record: a member finds
// none stored by another.
type recordlessFleet struct{ *MemoryFleet }

func (recordlessFleet) Load(context.Context, RecordKey) ([]byte, bool, error) { return nil, false, nil }

// TestFirstRobotsFetchWaitsForAPause checks that a member holding no copy
// of an origin's robots.txt, none stored either, asked about the origin
// during a pause another member stored, fetches it only once the pause
// is over: a question whose context ends first gets its error and
// fetches nothing.
func TestFirstRobotsFetchWaitsForAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pause = 2 * time.Minute
		site := newFakeSite(nil)
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", strconv.Itoa(int(pause.Seconds())))
			w.WriteHeader(http.StatusTooManyRequests)
		})
		fleet := recordlessFleet{NewMemoryFleet()}
		opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet}
		tr, asker := NewTransport(site, opts), NewTransport(site, opts)
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://site.example/busy"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := asker.Check(ctx, "http://site.example/page"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Check whose deadline ends in the pause = %v, want its context's error", err)
		}
		if n := len(site.robotsHits()); n != 1 {
			t.Errorf("%d robots.txt fetches during the pause, want 1, the first member's", n)
		}
		if err := asker.Check(context.Background(), "http://site.example/page"); err != nil {
			t.Errorf("Check after the pause = %v, want nil", err)
		}
		if hits := site.robotsHits(); len(hits) != 2 || hits[1].at.Sub(start) < pause {
			t.Errorf("robots.txt fetched at %v; want the second member's fetch after the pause of %v", hitTimes(hits, start), pause)
		}
	})
}

// TestNoRobotsFetchBySleeperDuringAPause checks that a fleet member whose
// request sleeps toward its slot, its robots.txt coming due meanwhile,
// does not fetch it as it wakes inside a pause another member received
// after it fell asleep: the fetch, like the request, waits for the
// pause's end.
func TestNoRobotsFetchBySleeperDuringAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay, pause = 10 * time.Second, 30 * time.Second
		site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "max-age=5")
			w.Write([]byte(allowAll))
		})
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				w.Header().Set("Retry-After", strconv.Itoa(int(pause.Seconds())))
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		fleet := NewMemoryFleet()
		opts := Options{UserAgent: "ExampleBot", MinDelay: delay, MinFreshness: time.Second, Fleet: fleet}
		sleeper := NewTransport(site, opts)
		// The other member paces by a shorter delay, so that its request
		// goes, and meets the 429, while the sleeper's sleeps.
		opts.MinDelay = delay / 2
		other := NewTransport(site, opts)
		start := time.Now()
		if _, err := bubbleGet(t, sleeper, "http://site.example/first"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, r := range []struct {
			tr   *Transport
			path string
		}{{other, "/busy"}, {sleeper, "/queued"}} {
			wg.Go(func() {
				if _, err := bubbleGet(t, r.tr, "http://site.example"+r.path); err != nil {
					t.Error(err)
				}
			})
			time.Sleep(time.Second)
		}
		bubbleWaitGroup(t, &wg, "the requests")
		busy := site.hitOf(t, "http://site.example/busy").at
		if busy.After(start.Add(delay)) {
			t.Fatalf("the 429 came at +%v, after the sleeper's slot at +%v: nothing to check", busy.Sub(start), delay)
		}
		end := busy.Add(pause)
		after := false // the 429 was sent
		for _, h := range site.hitsWhere(func(hit) bool { return true }) {
			after = after || strings.HasSuffix(h.url, "/busy")
			if after && strings.HasSuffix(h.url, "/robots.txt") && h.at.Before(end) {
				t.Errorf("robots.txt fetched at +%v, inside the pause that ends at +%v", h.at.Sub(start), end.Sub(start))
			}
		}
		if at := site.hitOf(t, "http://site.example/queued").at; at.Before(end) {
			t.Errorf("the queued request went at +%v, inside the pause that ends at +%v", at.Sub(start), end.Sub(start))
		}
	})
}

// TestUnreachableRobotsRetryAtDuringAPause checks that while a pause holds
// the fetch of an unreachable robots.txt back, a refusal tells the end of
// the pause as its RetryAt, when the fetch is made, not the retry time
// the pause made pass: a crawler requeueing the URL for it would spin.
func TestUnreachableRobotsRetryAtDuringAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(serve(http.StatusServiceUnavailable, ""))
		fleet := NewMemoryFleet()
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		start := time.Now()
		err := tr.Check(context.Background(), "http://site.example/page")
		refused, ok := errors.AsType[*DisallowedError](err)
		if !ok || !refused.RetryAt.After(start) {
			t.Fatalf("Check on an unreachable robots.txt = %v, want a refusal with a retry time", err)
		}
		until := refused.RetryAt.Add(time.Hour)
		if err := fleet.Pause(context.Background(), "http://site.example", until); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(refused.RetryAt) + time.Minute)
		err = tr.Check(context.Background(), "http://site.example/page")
		if refused, ok := errors.AsType[*DisallowedError](err); !ok || !refused.RetryAt.Equal(until) {
			t.Errorf("Check during the pause = %v, want a refusal to retry at the pause's end, +%v", err, until.Sub(start))
		}
		if n := len(site.robotsHits()); n != 1 {
			t.Errorf("%d robots.txt fetches, want 1: none during the pause", n)
		}
	})
}

// TestFirstRobotsFetchWaitsForAPauseThatGrows checks that a first fetch
// waiting for a pause asks it again as it ends: a pause made longer
// meanwhile holds the fetch until its new end.
func TestFirstRobotsFetchWaitsForAPauseThatGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := NewMemoryFleet()
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		start := time.Now()
		first, longer := start.Add(time.Minute), start.Add(5*time.Minute)
		if err := fleet.Pause(context.Background(), "http://site.example", first); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- tr.Check(context.Background(), "http://site.example/page") }()
		time.Sleep(30 * time.Second)
		if err := fleet.Pause(context.Background(), "http://site.example", longer); err != nil {
			t.Fatal(err)
		}
		if err := bubbleRecv(t, done, "Check"); err != nil {
			t.Fatal(err)
		}
		if hits := site.robotsHits(); len(hits) != 1 || hits[0].at.Before(longer) {
			t.Errorf("robots.txt fetched at %v; want once, at the grown pause's end, +%v", hitTimes(hits, start), longer.Sub(start))
		}
	})
}

// TestNoRobotsRedirectIntoAPausedOrigin checks that an origin's robots.txt
// whose redirect leads to another origin (another host, or the same host
// on https) in a Retry-After pause is not followed there before the pause
// ends: a first fetch waits for it, and a copy held answers through it.
func TestNoRobotsRedirectIntoAPausedOrigin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		held   bool
		target string // where a.example's robots.txt redirects, paused
	}{
		{"another host", false, "http://b.example"},
		{"another host, a copy held", true, "http://b.example"},
		{"another scheme", false, "https://a.example"},
	} {
		held := tc.held
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const pause = 2 * time.Minute
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Cache-Control", "max-age=5")
					if r.URL.String() == "http://a.example/robots.txt" {
						http.Redirect(w, r, tc.target+"/robots.txt", http.StatusMovedPermanently)
						return
					}
					w.Write([]byte(allowAll))
				})
				site.setPages(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/busy" {
						w.Header().Set("Retry-After", strconv.Itoa(int(pause.Seconds())))
						w.WriteHeader(http.StatusTooManyRequests)
					}
				})
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, MinFreshness: time.Second})
				start := time.Now()
				if held {
					if err := tr.Check(context.Background(), "http://a.example/page"); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Second)
				if _, err := bubbleGet(t, tr, tc.target+"/busy"); err != nil {
					t.Fatal(err)
				}
				busy := site.hitOf(t, tc.target+"/busy").at
				time.Sleep(10 * time.Second) // a's copy, if held, is due
				if err := tr.Check(context.Background(), "http://a.example/page"); err != nil {
					t.Errorf("Check = %v, want allowed", err)
				}
				asked := time.Since(start)
				for _, h := range site.hitsWhere(func(h hit) bool { return strings.HasPrefix(h.url, tc.target+"/") }) {
					if h.at.After(busy) && h.at.Before(busy.Add(pause)) {
						t.Errorf("%s requested at +%v, inside %s's pause", h.url, h.at.Sub(start), tc.target)
					}
				}
				if held && asked > 12*time.Second {
					t.Errorf("Check with a copy held answered at +%v, want at once, on the copy", asked)
				}
			})
		})
	}
}

// TestNextFreeWaitsForADeferredFirstFetch checks that while an origin's
// first robots.txt fetch waits out the pause of the origin its redirect
// leads to, NextFree answers that pause's end, as it grows: nothing goes
// before it.
func TestNextFreeWaitsForADeferredFirstFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Host == "a.example" {
				http.Redirect(w, r, "http://b.example/robots.txt", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte(allowAll))
		})
		fleet := NewMemoryFleet()
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		end := time.Now().Add(10 * time.Minute)
		fleet.Pause(context.Background(), "http://b.example", end)
		done := make(chan error, 1)
		go func() { done <- tr.Check(context.Background(), "http://a.example/page") }()
		synctest.Wait()
		if free, err := tr.NextFree(context.Background(), "http://a.example/page"); err != nil || free.Before(end) {
			t.Errorf("NextFree while the first fetch waits for b.example's pause = %v, %v; want %v, its end", free, err, end)
		}
		// Another member makes the pause longer: the fetch waits for its
		// new end, and NextFree says so.
		time.Sleep(time.Minute)
		end = end.Add(10 * time.Minute)
		fleet.Pause(context.Background(), "http://b.example", end)
		if free, err := tr.NextFree(context.Background(), "http://a.example/page"); err != nil || free.Before(end) {
			t.Errorf("NextFree once b.example's pause grew = %v, %v; want %v, its new end", free, err, end)
		}
		if err := bubbleRecv(t, done, "Check"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRedirectDeferredFetch checks what a robots.txt fetch stopped short
// of a paused origin its redirect leads to comes to: a first fetch made
// again once that pause ends waits for its own origin's pause too, come
// meanwhile; and a copy held answers until the pause ends, the robots.txt
// not asked again at every question.
func TestRedirectDeferredFetch(t *testing.T) {
	redirecting := func() *fakeSite {
		return newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "max-age=5")
			if r.URL.Host == "a.example" {
				http.Redirect(w, r, "http://b.example/robots.txt", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte(allowAll))
		})
	}
	aHits := func(site *fakeSite, start time.Time) []time.Duration {
		return hitTimes(site.hitsWhere(func(h hit) bool { return h.url == "http://a.example/robots.txt" }), start)
	}
	t.Run("its own origin paused meanwhile", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			site, fleet := redirecting(), NewMemoryFleet()
			tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
			start := time.Now()
			bEnd, aEnd := start.Add(2*time.Minute), start.Add(5*time.Minute)
			fleet.Pause(context.Background(), "http://b.example", bEnd)
			done := make(chan error, 1)
			go func() { done <- tr.Check(context.Background(), "http://a.example/page") }()
			time.Sleep(time.Minute)
			fleet.Pause(context.Background(), "http://a.example", aEnd)
			if err := bubbleRecv(t, done, "Check"); err != nil {
				t.Fatal(err)
			}
			if got := aHits(site, start); len(got) != 2 || got[0] != 0 || got[1] < aEnd.Sub(start) {
				t.Errorf("a.example's robots.txt asked at %v; want at +0s, stopped at the redirect, then after its own pause, +%v", got, aEnd.Sub(start))
			}
		})
	})
	t.Run("a fleet's first fetch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			site, fleet := redirecting(), NewMemoryFleet()
			start := time.Now()
			end := start.Add(10 * time.Minute)
			fleet.Pause(context.Background(), "http://b.example", end)
			var wg sync.WaitGroup
			for range 3 {
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
				wg.Go(func() {
					if err := tr.Check(context.Background(), "http://a.example/page"); err != nil {
						t.Error(err)
					}
				})
			}
			bubbleWaitGroup(t, &wg, "the members' Checks")
			var after int
			for _, h := range site.robotsHits() {
				if !h.at.Before(end) {
					after++
				}
			}
			if after != 2 {
				t.Errorf("robots.txt asked at %v; want the fleet to fetch once after b.example's pause, from a.example and b.example", hitTimes(site.robotsHits(), start))
			}
		})
	})
	t.Run("a copy held", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			site, fleet := redirecting(), NewMemoryFleet()
			tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, MinFreshness: time.Second, Fleet: fleet})
			start := time.Now()
			if err := tr.Check(context.Background(), "http://a.example/page"); err != nil {
				t.Fatal(err)
			}
			end := start.Add(time.Hour)
			fleet.Pause(context.Background(), "http://b.example", end)
			time.Sleep(10 * time.Second) // the copy is due
			for range 50 {
				if err := tr.Check(context.Background(), "http://a.example/page"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
			}
			if got := aHits(site, start); len(got) != 2 {
				t.Errorf("a.example's robots.txt asked at %v; want at +0s and once more, stopped at the redirect, during b.example's pause", got)
			}
		})
	})
}

// TestPauseBeforeAFirstFetchFailsFast: a request to a paused origin of
// which no robots.txt copy is held (forgotten, or never fetched) waits
// out the pause before its first fetch; one whose bound the pause passes
// fails at once with a *SlotError naming its end, as a slot past it does.
func TestPauseBeforeAFirstFetchFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(allowAll)), Request: r}
			if r.URL.Path == "/busy" {
				resp.StatusCode = http.StatusTooManyRequests
				resp.Header.Set("Retry-After", "3")
			}
			return resp, nil
		})
		tr := NewTransport(base, Options{MinDelay: -1, MaxOrigins: 1, Cache: NewMemoryCache(1, DefaultCacheBytes)})
		if err := sendFrom(tr, "http://x.example/busy"); err != nil {
			t.Fatal(err)
		}
		paused := time.Now()
		// More origins than the transport holds: x's robots.txt is
		// forgotten, its pause kept.
		for i := range 1100 {
			if err := sendFrom(tr, fmt.Sprintf("http://y%d.example/", i)); err != nil {
				t.Fatal(err)
			}
		}
		req, _ := http.NewRequestWithContext(WithMaxWait(context.Background(), 10*time.Millisecond), http.MethodGet, "http://x.example/page", nil)
		_, err := tr.RoundTrip(req)
		slot, ok := errors.AsType[*SlotError](err)
		if !ok || !slot.At.Equal(paused.Add(3*time.Second)) {
			t.Errorf("RoundTrip = %v; want a *SlotError at the pause's end", err)
		}
		if waited := time.Since(paused); waited > 0 {
			t.Errorf("the request was held %v; want it refused at once", waited)
		}
	})
}

// TestPauseBeforeAFirstFetchKeepsWhatDecides: the fail-fast of a first
// fetch held by a pause answers neither a request that a record stored by
// another member decides (its refusal stands), nor fails to see the pause
// of the origin a robots.txt redirect leads to.
func TestPauseBeforeAFirstFetchKeepsWhatDecides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
			switch {
			case r.URL.Host == "a.example" && r.URL.Path == "/robots.txt":
				resp.StatusCode = http.StatusMovedPermanently
				resp.Header.Set("Location", "http://b.example/robots.txt")
			case r.URL.Path == "/robots.txt":
				resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n"))
			case r.URL.Path == "/busy":
				resp.StatusCode = http.StatusTooManyRequests
				resp.Header.Set("Retry-After", "3")
			}
			return resp, nil
		})
		fleet := NewMemoryFleet()
		first := NewTransport(base, Options{MinDelay: -1, Fleet: fleet})
		if err := sendFrom(first, "http://b.example/busy"); err != nil {
			t.Fatal(err)
		}
		paused := time.Now()
		ctx := WithMaxWait(context.Background(), 10*time.Millisecond)

		// A member new to b: the record the first stored refuses /private.
		second := NewTransport(base, Options{MinDelay: -1, Fleet: fleet})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://b.example/private/x", nil)
		if _, err := second.RoundTrip(req); !errors.Is(err, ErrDisallowed) {
			t.Errorf("a refused URL during the pause: %v; want the stored record's refusal", err)
		}

		// a's robots.txt redirects into b's pause: its first fetch waits,
		// and a request that cannot wait that long fails at once.
		held := make(chan struct{})
		go func() {
			sendFrom(first, "http://a.example/one")
			close(held)
		}()
		synctest.Wait()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://a.example/two", nil)
		_, err := first.RoundTrip(req)
		if slot, ok := errors.AsType[*SlotError](err); !ok || slot.At.Before(paused.Add(3*time.Second)) {
			t.Errorf("a request behind a redirect's pause: %v; want a *SlotError at the pause's end", err)
		}
		if waited := time.Since(paused); waited > 0 {
			t.Errorf("held %v; want it refused at once", waited)
		}
		<-held
	})
}
