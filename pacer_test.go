package robots

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tests of the pacer run in testing/synctest bubbles over a fakeSite:
// time.Now, time.Sleep and every timer in the bubble are the bubble's,
// which moves only when every goroutine in it waits, so a test crosses a
// delay or an hour-long pause at once and asserts the exact time each
// request reached the site. synctest.Wait lets the goroutines settle; a
// wait on a result still has its deadline (bubbleRecv, bubbleGet), on
// the bubble's clock.
// The tests use only the transport's exported API.

// TestWorkerPoolKeepsPace checks that a pool of workers with short client
// timeouts on one origin keeps requests reaching the site at the paced
// rate, instead of stalling behind slots that failed-fast or timed-out
// waiters never gave back, and never in a burst. Alone, every request
// reaches the site one delay after the one before. With a robots.txt
// renewed every second that takes the site 300 ms to answer, the head of
// the line waits for the renewal before it goes, and the waiters behind
// it see their deadlines pass: requests are then never closer than a
// delay, and as many reach the site within twice the time.
func TestWorkerPoolKeepsPace(t *testing.T) {
	const (
		workers = 20
		delay   = 200 * time.Millisecond
		want    = 15
	)
	for _, tc := range []struct {
		name      string
		freshness time.Duration // of the robots.txt; zero: the default
		answer    time.Duration // the time the site takes to answer it
		within    time.Duration // by which want requests reached the site
		exact     bool          // whether each goes exactly a delay after the last
	}{
		{"failed-fast workers", 0, 0, (want-1)*delay + delay/2, true},
		{"waiters timing out behind a slow renewal", time.Second, 300 * time.Millisecond, 2 * want * delay, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(tc.answer)
					io.WriteString(w, allowAll)
				})
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay, Freshness: tc.freshness})
				// A slot more than 0.9 s away is past the deadline: most
				// workers fail fast, and each waiter's deadline is near
				// its slot.
				client := &http.Client{Transport: tr, Timeout: time.Second}
				start := time.Now()
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							resp, err := client.Get("http://site.example/page")
							if err != nil {
								// A crawler puts the URL back; a short pause
								// keeps the failed-fast workers from spinning.
								time.Sleep(10 * time.Millisecond)
								continue
							}
							resp.Body.Close()
						}
					})
				}
				// The bubble's clock moves on, every worker running
				// meanwhile; a stalled pool has sent fewer by then, and
				// fails at once rather than after a ceiling.
				time.Sleep(tc.within)
				close(stop)
				bubbleWaitGroup(t, &wg, "the workers to stop")
				pages := site.pageHits()
				got := hitTimes(pages, start)
				if len(got) < want {
					t.Fatalf("%d requests reached the site in %v, want %d: at %v", len(got), tc.within, want, got)
				}
				if tc.answer > 0 && len(site.robotsHits()) < 2 {
					t.Fatalf("robots.txt fetched %d times, want renewals: the test does not reach its case", len(site.robotsHits()))
				}
				for k := 1; k < len(pages); k++ {
					gap := pages[k].at.Sub(pages[k-1].at)
					if gap < delay || tc.exact && gap != delay {
						t.Errorf("request %d reached the site %v after the one before, want %s a delay (%v); all at %v", k, gap, map[bool]string{true: "exactly", false: "at least"}[tc.exact], delay, got)
						break
					}
				}
			})
		})
	}
}

// TestCancelGivesSlotsBack checks that waiters whose contexts end, in
// whatever order, leave at once and give their slots back: the one left
// moves up to the first slot, one delay after the last request sent, not
// one per waiter gone.
func TestCancelGivesSlotsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []int // of the waiters cancelled; waiter 3 stays
	}{
		{"oldest first", []int{0, 1, 2}},
		{"newest first", []int{2, 1, 0}},
		{"middle first", []int{1, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				tr := newBubbleTransport(site, Options{MinDelay: time.Second})
				if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
					t.Fatal(err)
				}
				sent := site.hitOf(t, "http://site.example/first").at
				var cancels []context.CancelFunc
				var results []chan error
				for i := range 4 {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/w"+strconv.Itoa(i), nil)
					done := make(chan error, 1)
					go func() { done <- sendReq(tr, req) }()
					synctest.Wait()
					if n := tr.Stats().Waiting; n != i+1 {
						t.Fatalf("%d requests wait for their slots once waiter %d came, want %d", n, i, i+1)
					}
					cancels, results = append(cancels, cancel), append(results, done)
				}
				for _, i := range tc.order {
					cancels[i]()
					if err := bubbleRecv(t, results[i], fmt.Sprintf("waiter %d to leave", i)); !errors.Is(err, context.Canceled) {
						t.Errorf("waiter %d: %v, want context.Canceled", i, err)
					}
				}
				if d := time.Since(sent); d != 0 {
					t.Errorf("the cancelled waiters left %v after the first request, want at once", d)
				}
				if err := bubbleRecv(t, results[3], "the last waiter's answer"); err != nil {
					t.Fatalf("last waiter: %v", err)
				}
				if d := site.hitOf(t, "http://site.example/w3").at.Sub(sent); d != time.Second {
					t.Errorf("the last waiter reached the site %v after the first request, want one delay (1s)", d)
				}
				if n := len(site.pageHits()); n != 2 {
					t.Errorf("%d pages served, want 2", n)
				}
			})
		})
	}
}

// sendReq sends req through tr, for a goroutine of a test: it returns
// the error, if any, closing the body of a response.
func sendReq(tr http.RoundTripper, req *http.Request) error {
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// pausing answers /busy with 429 and Retry-After: 3600, and any other
// page with 200.
func pausing(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/busy" {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

// TestSlotPastDeadlineFailsFast checks that a request whose slot lies
// past its deadline fails at once and takes no slot, with a *SlotError
// that names the origin and the slot's time and matches
// context.DeadlineExceeded, spaced or not.
func TestSlotPastDeadlineFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minDelay time.Duration
	}{
		{"unspaced", -1},
		// A slot taken at the pause's end would put the next request a
		// delay after it.
		{"spaced", time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				site.setPages(pausing)
				tr := newBubbleTransport(site, Options{MinDelay: tc.minDelay})
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://paused.example/busy"); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://paused.example/page", nil)
				_, err := bubbleRoundTrip(t, tr, req)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("RoundTrip = %v, want an error matching context.DeadlineExceeded", err)
				}
				var se *SlotError
				if !errors.As(err, &se) {
					t.Fatalf("RoundTrip = %v (%T), want a *SlotError", err, err)
				}
				if want := start.Add(time.Hour); se.Origin != "http://paused.example" || !se.At.Equal(want) {
					t.Errorf("SlotError{Origin: %q, At: %v}, want {http://paused.example, %v}, the pause's end", se.Origin, se.At, want)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("the request failed %v after the pause began, want at once", d)
				}
				if _, err := bubbleGet(t, tr, "http://paused.example/page"); err != nil {
					t.Fatal(err)
				}
				if d := site.hitOf(t, "http://paused.example/page").at.Sub(start); d != time.Hour {
					t.Errorf("the next request reached the site %v after the pause began, want 1h, its end: the failed request took no slot", d)
				}
				if n := len(site.pageHits()); n != 2 {
					t.Errorf("%d pages served, want 2", n)
				}
			})
		})
	}
}

// TestSlotNeedsATenthOfTheDeadline checks that a wait may take all but
// a tenth of the time its request has left: a slot 10 s away is waited
// for by a request with 12 s left and refused at once to one with 10.5 s.
func TestSlotNeedsATenthOfTheDeadline(t *testing.T) {
	const delay = 10 * time.Second
	for _, tc := range []struct {
		left time.Duration
		sent bool
	}{
		{12 * time.Second, true},
		{10500 * time.Millisecond, false},
	} {
		t.Run(tc.left.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				tr := newBubbleTransport(site, Options{MinDelay: delay})
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), tc.left)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/second", nil)
				_, err := bubbleRoundTrip(t, tr, req)
				if !tc.sent {
					var se *SlotError
					if !errors.As(err, &se) || time.Since(start) != 0 {
						t.Fatalf("RoundTrip = %v after %v, want a *SlotError at once", err, time.Since(start))
					}
					return
				}
				if err != nil {
					t.Fatalf("RoundTrip = %v, want the page", err)
				}
				if d := site.hitOf(t, "http://site.example/second").at.Sub(start); d != delay {
					t.Errorf("the request reached the site %v after the first, want %v", d, delay)
				}
			})
		})
	}
}

// slowReserveFleet is a MemoryFleet whose budget reservations take
// took, as a budget store far away does.
type slowReserveFleet struct {
	*MemoryFleet
	took time.Duration
}

func (f *slowReserveFleet) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (Reservation, error) {
	time.Sleep(f.took)
	return f.MemoryFleet.Reserve(ctx, crawl, url, amount, limit)
}

// TestSlotLimitCountsFromTheWait checks that the latest slot a request
// can use (its deadline less a tenth of the time left) is reckoned when
// it comes to wait, not from when it arrived: time spent before (here
// the price reserved up front, in a slow budget store) is no longer
// left, but a slot within the limit as of the wait is still kept.
func TestSlotLimitCountsFromTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay, took = time.Second, 300 * time.Millisecond
		site := newFakeSite(nil)
		site.setPages(newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.01"}).ServeHTTP)
		fleet := &slowReserveFleet{MemoryFleet: NewMemoryFleet()}
		tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet, Payment: testPayment})
		// /a's 402 tells the origin's price: /b offers it up front.
		if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil {
			t.Fatal(err)
		}
		fleet.took = took
		var sent time.Time
		for _, h := range site.pageHits() {
			sent = latest(sent, h.at)
		}
		// The slot is a delay (and a store slot's spread) after /a's
		// paid send; as of the wait, after the reservation, 0.9 s are
		// left, and a tenth of them kept: the slot is within the limit.
		ctx, cancel := context.WithDeadline(context.Background(), sent.Add(1200*time.Millisecond))
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/b", nil)
		if _, err := bubbleRoundTrip(t, tr, req); err != nil {
			t.Fatalf("RoundTrip = %v, want /b paid and sent: its slot lies before its deadline less a tenth of the time left once it waits", err)
		}
	})
}

// TestMaxWaitBoundsTheFirstSendOnly: WithMaxWait fails a request's
// first send at once, but not what follows one sent: a redirect hop
// http.Client makes and a paid request wait for their slots, a delay
// later, rather than fail and have a frontier send the first again.
func TestMaxWaitBoundsTheFirstSendOnly(t *testing.T) {
	const delay = time.Second
	for _, tc := range []struct {
		name  string
		pages http.HandlerFunc
		pay   Payment
		sent  []string // the pages sent, in order, a delay apart
	}{
		{"a redirect on the origin", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/dir" {
				http.Redirect(w, r, "/dir/", http.StatusMovedPermanently)
				return
			}
			io.WriteString(w, "page")
		}, Payment{}, []string{"/dir", "/dir/"}},
		{"a page paid after its 402", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Crawler-Exact-Price") == "" {
				w.Header().Set("Crawler-Price", "USD 0.01")
				w.WriteHeader(http.StatusPaymentRequired)
				return
			}
			w.Header().Set("Crawler-Charged", "USD 0.01")
			io.WriteString(w, "paid page")
		}, Payment{MaxPrice: MustParsePrice("USD 0.01"), Budget: MustParsePrice("USD 1")}, []string{"/dir", "/dir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				site.setPages(tc.pages)
				tr := newBubbleTransport(site, Options{MinDelay: delay, Payment: tc.pay})
				req, _ := http.NewRequestWithContext(WithMaxWait(context.Background(), 10*time.Millisecond), http.MethodGet, "http://site.example/dir", nil)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatalf("GET /dir: %v, want the page", err)
				}
				resp.Body.Close()
				hits := site.hitsWhere(func(h hit) bool { return !strings.HasSuffix(h.url, "/robots.txt") })
				if len(hits) != len(tc.sent) {
					t.Fatalf("%d pages sent, want %d (%q)", len(hits), len(tc.sent), tc.sent)
				}
				for i, h := range hits {
					if h.url != "http://site.example"+tc.sent[i] {
						t.Errorf("send %d: %s, want %s", i, h.url, tc.sent[i])
					}
					if i > 0 && h.at.Sub(hits[i-1].at) != delay {
						t.Errorf("send %d went %v after the one before, want %v", i, h.at.Sub(hits[i-1].at), delay)
					}
				}
			})
		})
	}
}

// TestMaxWait checks WithMaxWait: a request whose slot is further away
// than the wait allowed fails at once with a *SlotError naming the slot
// and the bound, taking no slot, while one within it waits and is sent;
// a deadline nearer than the bound still rules, and the bound does not
// limit the request once sent.
func TestMaxWait(t *testing.T) {
	const delay = 10 * time.Second
	for _, tc := range []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration // 0: none
		sent     bool
	}{
		{"a slot within the wait is waited for", delay, 0, true},
		{"a slot past the wait fails at once", delay - time.Millisecond, 0, false},
		{"no wait at all", 0, 0, false},
		{"a nearer deadline rules", time.Hour, 5 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				tr := newBubbleTransport(site, Options{MinDelay: delay})
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
					t.Fatal(err)
				}
				ctx := WithMaxWait(context.Background(), tc.maxWait)
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/second", nil)
				_, err := bubbleRoundTrip(t, tr, req)
				if tc.sent {
					if err != nil {
						t.Fatalf("RoundTrip = %v, want the page", err)
					}
					if d := site.hitOf(t, "http://site.example/second").at.Sub(start); d != delay {
						t.Errorf("sent %v after the first, want %v", d, delay)
					}
					return
				}
				var se *SlotError
				if !errors.As(err, &se) || time.Since(start) != 0 || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("RoundTrip = %v after %v, want a *SlotError at once", err, time.Since(start))
				}
				if !se.At.Equal(start.Add(delay)) {
					t.Errorf("SlotError.At %v after the first, want %v", se.At.Sub(start), delay)
				}
				byWait, wantMax := tc.deadline == 0, tc.maxWait
				if !byWait {
					wantMax = 0
				}
				if se.MaxWait != wantMax || byWait != strings.Contains(se.Error(), "longest wait allowed") {
					t.Errorf("SlotError{MaxWait: %v} %q, want MaxWait %v, the wait's bound named: %v", se.MaxWait, se, wantMax, byWait)
				}
				// The failed request took no slot: the next goes at the
				// first's slot plus one delay.
				if _, err := bubbleGet(t, tr, "http://site.example/third"); err != nil {
					t.Fatal(err)
				}
				if d := site.hitOf(t, "http://site.example/third").at.Sub(start); d != delay {
					t.Errorf("the next request sent %v after the first, want %v", d, delay)
				}
			})
		})
	}
}

// noCache is an Options.Cache that keeps nothing, so that an origin
// forgotten in memory is fetched again.
type noCache struct{}

func (noCache) Get(string) ([]byte, bool) { return nil, false }
func (noCache) Set(string, []byte)        {}
func (noCache) Delete(string)             {}

// TestPauseOutlivesOrigin checks that a Retry-After pause survives the
// origin's robots.txt being forgotten: the origin's robots.txt weighs more
// than the table may hold, so the transport forgets it as soon as it is
// kept, and fetches it again for the next request.
func TestPauseOutlivesOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const tableBytes = 64 << 10
		heavy := allowAll + strings.Repeat("# "+strings.Repeat("x", 78)+"\n", tableBytes/80)
		site := newFakeSite(serve(200, heavy))
		site.setPages(pausing)
		tr := newBubbleTransport(site, Options{MaxRobotsBytes: tableBytes, Cache: noCache{}})
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://paused.example/busy"); err != nil {
			t.Fatal(err)
		}
		if n := tr.Stats().Origins; n != 0 {
			t.Fatalf("%d origins held, want none: the test does not reach its case, an origin forgotten", n)
		}
		if _, err := bubbleGet(t, tr, "http://paused.example/page"); err != nil {
			t.Fatal(err)
		}
		if n := len(site.robotsHits()); n != 2 {
			t.Fatalf("paused.example's robots.txt fetched %d times, want 2: the test does not reach its case, an origin forgotten", n)
		}
		if d := site.hitOf(t, "http://paused.example/page").at.Sub(start); d != time.Hour {
			t.Errorf("the page reached the site %v after the pause began, want 1h: the pause outlives the origin", d)
		}
	})
}

// TestWaitPastFreshnessDecidesAgain checks that a request decided on a
// robots.txt that goes stale while it waits is decided again, on the
// robots.txt fetched once the wait is over, before it is sent.
func TestWaitPastFreshnessDecidesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(pausing)
		tr := newBubbleTransport(site, Options{Freshness: time.Hour})
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://site.example/busy"); err != nil {
			t.Fatal(err)
		}
		site.setRobots(serve(200, "User-agent: *\nDisallow: /page\n"))
		if _, err := bubbleGet(t, tr, "http://site.example/page"); !errors.Is(err, ErrDisallowed) {
			t.Fatalf("RoundTrip = %v, want ErrDisallowed from the robots.txt fetched after the wait", err)
		}
		if n := len(site.pageHits()); n != 1 {
			t.Errorf("%d pages served, want only /busy", n)
		}
		if got := hitTimes(site.robotsHits(), start); !slices.Equal(got, []time.Duration{0, time.Hour}) {
			t.Errorf("robots.txt fetched at %v, want [0s 1h0m0s]: again once the wait is over", got)
		}
	})
}

// TestRaisedCrawlDelayAfterAWait checks that a request whose wait
// outlasted its robots.txt's freshness is spaced by the Crawl-delay of
// the robots.txt fetched again then, raised, rather than by the delay it
// started waiting with.
func TestRaisedCrawlDelayAfterAWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(serve(200, "User-agent: *\nCrawl-delay: 100\n"))
		tr := newBubbleTransport(site, Options{Freshness: time.Minute, MaxCrawlDelay: time.Hour})
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil {
			t.Fatal(err)
		}
		site.setRobots(serve(200, "User-agent: *\nCrawl-delay: 300\n"))
		if _, err := bubbleGet(t, tr, "http://site.example/b"); err != nil {
			t.Fatal(err)
		}
		if got := site.hitOf(t, "http://site.example/b").at.Sub(start); got != 300*time.Second {
			t.Errorf("/b sent at %v, want 5m0s: the raised Crawl-delay after /a", got)
		}
	})
}

// watchedFleet is a MemoryFleet that records the reservations it
// answers, can report another count of members, and can be taken down:
// while down is set, each reservation fails after taking lag on the
// bubble's clock, as a Redis call that times out, and NextSlot fails at
// once.
type watchedFleet struct {
	*MemoryFleet
	lag     time.Duration
	members int // if not zero, the Members of every slot
	// membersOf, if it names the origin, is the Members of its slots;
	// guarded by mu.
	membersOf map[OriginKey]int
	down      atomic.Bool
	// late is how long after its reservation each answer is in hand,
	// on the bubble's clock: a slow store, or a member paused by its
	// runtime on the way back.
	late atomic.Int64
	// onReserve, if set, runs once a slot is reserved, before the answer
	// returns.
	onReserve func()
	// cancelLag is how long CancelSlot takes, on the bubble's clock.
	cancelLag time.Duration
	// nextSlotWhileDown, if set, has NextSlot answer while down is set:
	// a store that fails only its reservations.
	nextSlotWhileDown bool

	// mu protects the fields below.
	mu       sync.Mutex
	requests []SlotRequest
	slots    []Slot
	// epoch, if not empty, is the Epoch of every slot.
	epoch string
	// cancels are the slots given back, as CancelSlot was called.
	cancels []givenBack
}

// givenBack is one CancelSlot call.
type givenBack struct {
	at       time.Time
	interval time.Duration
}

func newWatchedFleet() *watchedFleet { return &watchedFleet{MemoryFleet: NewMemoryFleet()} }

func (f *watchedFleet) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	if f.down.Load() {
		tm := time.NewTimer(f.lag)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
		}
		return Slot{}, errors.New("store unavailable")
	}
	slot, err := f.MemoryFleet.ReserveSlot(ctx, key, req)
	if f.members != 0 {
		slot.Members = f.members
	}
	f.mu.Lock()
	if n, ok := f.membersOf[key]; ok {
		slot.Members = n
	}
	if f.epoch != "" {
		slot.Epoch = f.epoch
	}
	f.requests, f.slots = append(f.requests, req), append(f.slots, slot)
	f.mu.Unlock()
	if f.onReserve != nil {
		f.onReserve()
	}
	time.Sleep(time.Duration(f.late.Load()))
	return slot, err
}

func (f *watchedFleet) CancelSlot(ctx context.Context, key OriginKey, at time.Time, interval time.Duration) error {
	// As a store over the network does, a call whose context has ended
	// does not reach it.
	if err := ctx.Err(); err != nil {
		return err
	}
	time.Sleep(f.cancelLag)
	f.mu.Lock()
	f.cancels = append(f.cancels, givenBack{at, interval})
	f.mu.Unlock()
	return f.MemoryFleet.CancelSlot(ctx, key, at, interval)
}

// givenBack returns the slots given back so far.
func (f *watchedFleet) givenBack() []givenBack {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cancels)
}

// checkGivenBack fails t unless every slot given back is named as a
// reservation made it: the end of its spread, and its interval with the
// spread, so that a store that moves its last slot back by the interval
// restores the one before exactly.
func (f *watchedFleet) checkGivenBack(t *testing.T) {
	t.Helper()
	reqs, slots := f.reserved()
	for _, g := range f.givenBack() {
		made := false
		for i, r := range reqs {
			made = made || slots[i].Reserved && g.at.Equal(slots[i].At.Add(r.Spread)) && g.interval == r.Interval+r.Spread
		}
		if !made {
			t.Errorf("slot %v (interval %v) given back: no reservation made it", g.at, g.interval)
		}
	}
}

// setEpoch makes epoch the Epoch of every slot from now on.
func (f *watchedFleet) setEpoch(epoch string) {
	f.mu.Lock()
	f.epoch = epoch
	f.mu.Unlock()
}

func (f *watchedFleet) NextSlot(ctx context.Context, key OriginKey, req SlotRequest) (time.Time, error) {
	if f.down.Load() && !f.nextSlotWhileDown {
		return time.Time{}, errors.New("store unavailable")
	}
	return f.MemoryFleet.NextSlot(ctx, key, req)
}

// reserved returns the reservations answered so far and their slots.
func (f *watchedFleet) reserved() ([]SlotRequest, []Slot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests), slices.Clone(f.slots)
}

// TestFleetFallbackKeepsOwnPace checks that a request paced alone after a
// failed store call is never sent sooner than the process's own last send
// plus the delay: the slot the store granted before, which lasts its
// spread, counts, and the local slot counts from the clock read after the
// failed call (which took lag), not before it. With members, the fallback
// paces at the delay times the members last seen.
func TestFleetFallbackKeepsOwnPace(t *testing.T) {
	const delay = time.Second
	for _, tc := range []struct {
		name    string
		after   time.Duration // between the shared request and the next
		lag     time.Duration // that each failed store call takes
		members int
		gaps    []time.Duration // between the requests reaching the site
		// spread is whether the first gap counts from the end of the
		// shared slot's spread, as a store slot lasts until then.
		spread bool
	}{
		{"a quick failure right after a shared slot", 100 * time.Millisecond, 0, 1, []time.Duration{delay, delay, delay}, true},
		{"a slow failure", 1100 * time.Millisecond, 400 * time.Millisecond, 1, []time.Duration{1500 * time.Millisecond, 1400 * time.Millisecond, 1400 * time.Millisecond}, false},
		{"three members last seen", 100 * time.Millisecond, 0, 3, []time.Duration{3 * delay, 3 * delay, 3 * delay}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				fleet := newWatchedFleet()
				fleet.lag, fleet.members = tc.lag, tc.members
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: fleet})
				if _, err := bubbleGet(t, tr, "http://fleet.example/shared"); err != nil {
					t.Fatal(err)
				}
				reqs, _ := fleet.reserved()
				if len(reqs) != 1 {
					t.Fatalf("%d slots reserved in the store for the shared request, want 1", len(reqs))
				}
				fleet.down.Store(true)
				time.Sleep(tc.after)
				for i := range len(tc.gaps) {
					if _, err := bubbleGet(t, tr, "http://fleet.example/local"+strconv.Itoa(i)); err != nil {
						t.Fatal(err)
					}
				}
				want := slices.Clone(tc.gaps)
				if tc.spread {
					want[0] += reqs[0].Spread
				}
				sends := site.pageHits()
				var gaps []time.Duration
				for i := 1; i < len(sends); i++ {
					gaps = append(gaps, sends[i].at.Sub(sends[i-1].at))
				}
				if !slices.Equal(gaps, want) {
					t.Errorf("requests reached the site %v apart, want %v", gaps, want)
				}
			})
		})
	}
}

// TestOutagePacesEachOriginByItsMembers checks that while the store is
// down each origin is paced at the delay times the members the store last
// counted on that origin, and an origin it never counted at the delay
// times the members it last counted on any.
func TestOutagePacesEachOriginByItsMembers(t *testing.T) {
	const delay = time.Second
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := newWatchedFleet()
		// uncounted.example's answers count no members, as from a store
		// that does not count: they say nothing of the members.
		fleet.membersOf = map[OriginKey]int{"http://one.example": 1, "http://three.example": 3, "http://uncounted.example": 0}
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: fleet})
		// one.example first, so that the count last given for any
		// origin is three.example's.
		for _, origin := range []string{"http://one.example", "http://three.example", "http://uncounted.example"} {
			if _, err := bubbleGet(t, tr, origin+"/shared"); err != nil {
				t.Fatal(err)
			}
		}
		fleet.down.Store(true)
		time.Sleep(time.Hour)
		for _, tc := range []struct {
			origin string
			gap    time.Duration
		}{
			{"http://one.example", delay},
			{"http://three.example", 3 * delay},
			{"http://uncounted.example", 3 * delay},
			{"http://never.example", 3 * delay},
		} {
			for i := range 3 {
				if _, err := bubbleGet(t, tr, tc.origin+"/local"+strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
			sends := site.hitsWhere(func(h hit) bool { return strings.HasPrefix(h.url, tc.origin+"/local") })
			for i := 1; i < len(sends); i++ {
				if gap := sends[i].at.Sub(sends[i-1].at); gap != tc.gap {
					t.Errorf("%s: requests %d and %d reached the site %v apart during the outage, want %v", tc.origin, i-1, i, gap, tc.gap)
				}
			}
			next, err := tr.NextFree(context.Background(), tc.origin+"/next")
			if want := sends[len(sends)-1].at.Add(tc.gap); err != nil || !next.Equal(want) {
				t.Errorf("%s: NextFree during the outage = %v, %v, want %v", tc.origin, next, err, want)
			}
		}
	})
}

// TestCallerGivingUpInAStoreCall checks that a request whose deadline
// ends while the store is asked for its slot returns the deadline's
// error, is not sent, is not counted as a store error and does not
// switch the process to pacing alone.
func TestCallerGivingUpInAStoreCall(t *testing.T) {
	const delay = time.Second
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := newWatchedFleet()
		fleet.members = 3
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: fleet})
		if _, err := bubbleGet(t, tr, "http://fleet.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * delay)
		// A store that does not answer until the caller gives up.
		fleet.down.Store(true)
		fleet.lag = time.Hour
		ctx, cancel := context.WithTimeout(context.Background(), delay/2)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://fleet.example/given-up", nil)
		if resp, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
			if err == nil {
				resp.Body.Close()
			}
			t.Fatalf("RoundTrip = %v, want the deadline's error", err)
		}
		if n := len(site.pageHits()); n != 1 {
			t.Errorf("%d pages reached the site, want only the first: a request whose caller gave up was sent", n)
		}
		if n := tr.Stats().StoreErrors; n != 0 {
			t.Errorf("StoreErrors = %d, want 0: the caller gave up, the store did not fail", n)
		}
		fleet.down.Store(false)
		now := time.Now()
		if next, err := tr.NextFree(context.Background(), "http://fleet.example/next"); err != nil || !next.Equal(now) {
			t.Errorf("NextFree = %v, %v, want now (%v): the process paces alone as if the store had failed", next, err, now)
		}
	})
}

// silentWrites is a Fleet whose Pause and CancelSlot never answer: each
// returns only when its context ends, as a store with no timeout of its
// own does. Its ReserveSlot answers after lag, whatever its context.
type silentWrites struct {
	*MemoryFleet
	lag    time.Duration
	writes atomic.Int64
}

func (f *silentWrites) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	time.Sleep(f.lag)
	return f.MemoryFleet.ReserveSlot(context.WithoutCancel(ctx), key, req)
}

func (f *silentWrites) silent(ctx context.Context) error {
	f.writes.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func (f *silentWrites) Pause(ctx context.Context, _ OriginKey, _ time.Time) error {
	return f.silent(ctx)
}

func (f *silentWrites) CancelSlot(ctx context.Context, _ OriginKey, _ time.Time, _ time.Duration) error {
	return f.silent(ctx)
}

// TestStoreWritesHoldNoRequestPastItsDeadline checks that the store
// writes a request makes for the fleet, a Retry-After's pause and a slot
// given back, which are to land even once the request gave up, keep it
// no longer than its deadline when the store does not answer: RoundTrip
// returns the 429 at its deadline, and a request whose slot came after
// its deadline returns as the slot comes.
func TestStoreWritesHoldNoRequestPastItsDeadline(t *testing.T) {
	const deadline = time.Second
	for _, tc := range []struct {
		name string
		lag  time.Duration // of ReserveSlot
		page int
		took time.Duration
	}{
		{"a pause", 0, http.StatusTooManyRequests, deadline},
		{"a slot given back", 2 * deadline, http.StatusOK, 2 * deadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				site.setPages(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "60")
					w.WriteHeader(tc.page)
				})
				fleet := &silentWrites{MemoryFleet: NewMemoryFleet()}
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
				if err := tr.Check(context.Background(), "http://site.example/"); err != nil {
					t.Fatal(err)
				}
				fleet.lag = tc.lag
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/page", nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("RoundTrip returned after %v (%v), want %v: a store write held it past its deadline", took, err, tc.took)
				}
				synctest.Wait()
				if n := fleet.writes.Load(); n != 1 {
					t.Errorf("%d store writes, want 1", n)
				}
				// The write is left to its bound, FetchTimeout: a write
				// that outlived it would leave the bubble deadlocked.
				time.Sleep(DefaultFetchTimeout)
			})
		})
	}
}

// busySite returns a site whose /busy, once answer is closed, answers 429
// with a Retry-After of an hour.
func busySite(answer <-chan struct{}) *fakeSite {
	site := newFakeSite(nil)
	site.setPages(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			hold(r, answer)
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	return site
}

// TestPauseHoldsWaiters checks that a Retry-After holds the requests
// already waiting in line, not only those that come after it: a waiter
// booked a delay after the request that was answered 429 is sent no
// sooner than the pause's end.
func TestPauseHoldsWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan struct{})
		site := busySite(answer)
		tr := newBubbleTransport(site, Options{MinDelay: time.Second})
		start := time.Now()
		busy := make(chan error, 1)
		go func() { busy <- sendFrom(tr, "http://site.example/busy") }()
		synctest.Wait()
		if n := len(site.pageHits()); n != 1 {
			t.Fatalf("%d pages reached the site, want /busy", n)
		}
		waiter := make(chan error, 1)
		go func() { waiter <- sendFrom(tr, "http://site.example/page") }()
		synctest.Wait()
		if n := tr.Stats().Waiting; n != 1 {
			t.Fatalf("%d requests wait for their slots, want 1", n)
		}
		close(answer)
		if err := bubbleRecv(t, busy, "the answer to /busy"); err != nil {
			t.Fatal(err)
		}
		if err := bubbleRecv(t, waiter, "the waiter's answer"); err != nil {
			t.Fatal(err)
		}
		if d := site.hitOf(t, "http://site.example/page").at.Sub(start); d != time.Hour {
			t.Errorf("the waiter reached the site %v after the 429, want 1h, the pause's end", d)
		}
	})
}

// TestPauseWakesTheHead checks that a Retry-After reaches the head of the
// line asleep toward its slot at once: a pause that puts its slot past
// its deadline fails it with a *SlotError when the 429 comes, not when
// the slot it slept toward does.
func TestPauseWakesTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan struct{})
		site := busySite(answer)
		tr := newBubbleTransport(site, Options{MinDelay: 10 * time.Second})
		start := time.Now()
		busy := make(chan error, 1)
		go func() { busy <- sendFrom(tr, "http://site.example/busy") }()
		synctest.Wait()
		type result struct {
			err error
			at  time.Duration
		}
		head := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/page", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			head <- result{err, time.Since(start)}
		}()
		time.Sleep(2 * time.Second)
		close(answer)
		if err := bubbleRecv(t, busy, "the answer to /busy"); err != nil {
			t.Fatal(err)
		}
		got := bubbleRecv(t, head, "the head's answer")
		if _, ok := errors.AsType[*SlotError](got.err); !ok {
			t.Fatalf("the head's request: %v, want a *SlotError", got.err)
		}
		if got.at != 2*time.Second {
			t.Errorf("the head failed %v after the start, want 2s, when the 429 came", got.at)
		}
	})
}

// unusableFleet is a MemoryFleet that answers every reservation with a
// slot a second from now, whatever the Limit, as a store that kept its
// pause in the wrong unit would, and counts the reservations.
type unusableFleet struct {
	*MemoryFleet
	calls atomic.Int64
	// bad, if not zero, is how many unusable answers it gives before it
	// answers as the MemoryFleet does.
	bad int64
}

// spinGuard is how many reservations unusableFleet answers before it
// fails instead: a transport that asks for ever never waits, which no
// deadline in a bubble can end, so the store ends it, and the request
// then goes on the local pace, which the test sees.
const spinGuard = 1000

func (u *unusableFleet) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	n := u.calls.Add(1)
	if n > spinGuard {
		return Slot{}, errors.New("unusableFleet: asked too often")
	}
	if u.bad != 0 && n > u.bad {
		return u.MemoryFleet.ReserveSlot(ctx, key, req)
	}
	return Slot{At: req.Now.Add(time.Second), Reserved: true, Members: 1}, nil
}

// TestUnusableStoreSlotsFail checks that a request whose store keeps
// answering slots it was not asked for (reserved later than the Limit
// of now) fails after a bounded number of answers, with an error,
// rather than reserving, giving back and reserving again for ever, and
// never goes in such a slot.
func TestUnusableStoreSlotsFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(serve(404, ""))
		fleet := &unusableFleet{MemoryFleet: NewMemoryFleet()}
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		_, err := bubbleGet(t, tr, "http://site.example/page")
		if err == nil || !strings.Contains(err.Error(), "no usable politeness slot") {
			t.Fatalf("RoundTrip = %v, want the error that the store's slots are unusable", err)
		}
		// A bound, not the transport's constant (8 today): a few tries.
		const fewTries = 16
		if n := fleet.calls.Load(); n > fewTries {
			t.Errorf("%d reservations for one request, want at most %d", n, fewTries)
		}
		if n := len(site.pageHits()); n != 0 {
			t.Errorf("%d pages served in slots the store was not asked for", n)
		}
	})
}

// staticBase answers /robots.txt with allowAll and every other request
// with 200, recording nothing: the base of a benchmark.
var staticBase = rtFunc(func(r *http.Request) (*http.Response, error) {
	body := "page"
	if r.URL.Path == "/robots.txt" {
		body = allowAll
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader(body))}, nil
})

// BenchmarkNewOrigins measures a request to an origin the transport has
// never seen, every delay still running (an hour), on the real clock: in
// a transport with room for it ("room": fresh every 2,000 origins), and
// in one whose schedules are all busy and past their overflow bound
// ("full"), where each new origin makes room. A new origin costs the
// same in both; a scan of the table per new origin makes "full" a
// hundred times dearer. Compare the two, and each with the previous
// version (old and new test binaries alternating, benchstat).
func BenchmarkNewOrigins(b *testing.B) {
	const maxOrigins, probe = 1000, 2000
	for _, bc := range []struct {
		name   string
		before int // origins sent to first
	}{
		{"room", 0},
		{"full", 4 * 4 * maxOrigins},
	} {
		b.Run(bc.name, func(b *testing.B) {
			newTransport := func() *Transport {
				return NewTransport(staticBase, Options{UserAgent: "ExampleBot", MinDelay: time.Hour, MaxOrigins: maxOrigins})
			}
			tr, n := newTransport(), 0
			send := func() {
				if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/page", n)); err != nil {
					b.Fatal(err)
				}
				n++
			}
			for range bc.before {
				send()
			}
			for b.Loop() {
				if bc.before == 0 && n == probe {
					b.StopTimer()
					tr, n = newTransport(), 0
					b.StartTimer()
				}
				send()
			}
		})
	}
}

// pausedOf counts the origins host0.example to host<n-1>.example that
// tr's NextFree holds until at least until.
func pausedOf(t *testing.T, tr *Transport, n int, until time.Time) int {
	t.Helper()
	held := 0
	for i := range n {
		at, err := tr.NextFree(context.Background(), fmt.Sprintf("http://host%d.example/", i))
		if err != nil {
			t.Fatal(err)
		}
		if !at.Before(until) {
			held++
		}
	}
	return held
}

// TestNewOriginsStayBounded checks that the politeness schedules of new
// origins, each within its delay (an hour), stop growing at the bound
// Options.MaxOrigins gives (four times 1,024 for MaxOrigins 100): past
// it NextFree finds the oldest free, their schedules forgotten, while it
// still holds the newest within their delay. (It was the bound part of
// TestNewOriginsCostFlat, whose speed BenchmarkNewOrigins measures.)
func TestNewOriginsStayBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const origins, bound = 5000, 4 * 1024
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: time.Hour, MaxOrigins: 100})
		for i := range origins {
			if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
				t.Fatal(err)
			}
		}
		end := time.Now().Add(time.Hour)
		if at, err := tr.NextFree(context.Background(), fmt.Sprintf("http://host%d.example/", origins-1)); err != nil || !at.Equal(end) {
			t.Fatalf("NextFree of the newest origin = %v, %v; want %v, its delay's end", at, err, end)
		}
		if n := pausedOf(t, tr, origins, end); n > bound {
			t.Errorf("NextFree holds %d of %d origins within their delay, want at most %d: the schedules grew past their bound", n, origins, bound)
		}
	})
}

// TestNextFree checks that Transport.NextFree tells when a URL's origin is
// next free, from everything that holds a request back: no held robots.txt
// (free now), the delay after the last send (MinDelay, or a Crawl-delay
// that raises it), a Retry-After pause, an unreachable robots.txt's retry
// time; and that it reserves nothing, so a request sent at that time goes
// without waiting.
func TestNextFree(t *testing.T) {
	const delay = time.Second
	for _, tc := range []struct {
		name   string
		robots string // "" for allowAll; "503" for an unreachable robots.txt
		page   int    // the first page's status; 503 answers Retry-After: 120
		want   time.Duration
	}{
		{"the delay after the last send", "", 200, delay},
		{"a Crawl-delay raising it", "User-agent: *\nCrawl-delay: 5\n", 200, 5 * time.Second},
		{"a Retry-After pause", "", 503, 120 * time.Second},
		{"an unreachable robots.txt's retry", "503", 200, DefaultMinBackoff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				robots := serve(200, cmp.Or(tc.robots, allowAll))
				if tc.robots == "503" {
					robots = serve(503, "")
				}
				site := newFakeSite(robots)
				var pages atomic.Int64
				site.setPages(func(w http.ResponseWriter, r *http.Request) {
					if pages.Add(1) == 1 && tc.page == 503 {
						w.Header().Set("Retry-After", "120")
						w.WriteHeader(503)
					}
				})
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay})
				ctx := context.Background()
				start := time.Now()
				if at, err := tr.NextFree(ctx, "http://site.example/a"); err != nil || !at.Equal(start) {
					t.Fatalf("NextFree before any request = %v, %v; want now, %v", at, err, start)
				}
				if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil && !errors.Is(err, ErrDisallowed) {
					t.Fatal(err)
				}
				want := start.Add(tc.want)
				for range 2 { // asking twice takes nothing
					if at, err := tr.NextFree(ctx, "http://site.example/b"); err != nil || !at.Equal(want) {
						t.Fatalf("NextFree = %v, %v; want %v (%v on)", at, err, want, tc.want)
					}
				}
				if tc.robots == "503" {
					return
				}
				time.Sleep(tc.want)
				if _, err := bubbleGet(t, tr, "http://site.example/b"); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(want); d != 0 {
					t.Errorf("the request sent at NextFree's time waited %v", d)
				}
				if at := site.hitOf(t, "http://site.example/b").at; !at.Equal(want) {
					t.Errorf("the request sent at NextFree's time reached the site at %v, want %v", at, want)
				}
			})
		})
	}
}

// TestNextFreeWhileRobotsFails checks that NextFree, while a refresh of
// the robots.txt fails, answers the later of its retry time and the slot
// its last good copy's Crawl-delay sets, and that a request sent then,
// once the robots.txt answers again, goes at once.
func TestNextFreeWhileRobotsFails(t *testing.T) {
	for _, tc := range []struct {
		name       string
		crawlDelay time.Duration
		want       time.Duration // after the first page's send
	}{
		{"a Crawl-delay past the retry", 10 * time.Minute, 10 * time.Minute},
		{"a retry past the Crawl-delay", time.Minute, 3*time.Minute + DefaultMinBackoff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := fmt.Sprintf("User-agent: *\nCrawl-delay: %d\n", int(tc.crawlDelay.Seconds()))
				var failing atomic.Bool
				site := newFakeSite(failingRobots(&failing, 120, body))
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, MaxCrawlDelay: time.Hour})
				ctx := context.Background()
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Minute) // the copy is due, and the refresh fails
				failing.Store(true)
				if err := tr.Check(ctx, "http://site.example/b"); !errors.Is(err, ErrDisallowed) {
					t.Fatalf("Check with the robots.txt failing = %v, want it refused", err)
				}
				want := start.Add(tc.want)
				if at, err := tr.NextFree(ctx, "http://site.example/b"); err != nil || !at.Equal(want) {
					t.Fatalf("NextFree = %v, %v; want %v (start + %v)", at.Sub(start), err, want.Sub(start), tc.want)
				}
				failing.Store(false)
				time.Sleep(time.Until(want))
				if _, err := bubbleGet(t, tr, "http://site.example/b"); err != nil {
					t.Fatal(err)
				}
				if at := site.hitOf(t, "http://site.example/b").at; !at.Equal(want) {
					t.Errorf("the request sent at NextFree's time reached the site at start + %v, want + %v", at.Sub(start), tc.want)
				}
			})
		})
	}
}

// TestNextFreeSeesAnOutageAnotherMemberMet checks that NextFree, on a
// member whose copy of the robots.txt is due (or that holds none), answers
// no earlier than the retry time of an unreachable robots.txt another
// member of the fleet met and stored, since a request sent earlier would
// read that record and be refused; and that one sent at that time goes.
func TestNextFreeSeesAnOutageAnotherMemberMet(t *testing.T) {
	for _, tc := range []struct {
		name string
		held bool // whether the first member holds a copy, due by then
	}{
		{"a copy held and due", true},
		{"no copy held", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var failing atomic.Bool
				site := newFakeSite(failingRobots(&failing, 60, allowAll))
				opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, MinFreshness: time.Minute, Fleet: NewMemoryFleet()}
				a, b := NewTransport(site, opts), NewTransport(site, opts)
				ctx := context.Background()
				start := time.Now()
				if tc.held {
					if _, err := bubbleGet(t, a, "http://site.example/a"); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Minute) // a's copy, if any, is due
				failing.Store(true)
				err := b.Check(ctx, "http://site.example/b")
				var de *DisallowedError
				if !errors.As(err, &de) || !de.RetryAt.After(time.Now()) {
					t.Fatalf("b's Check with the robots.txt failing = %v, want it refused until a retry", err)
				}
				fetches := len(site.robotsHits())
				at, err := a.NextFree(ctx, "http://site.example/c")
				if err != nil || at.Before(de.RetryAt) {
					t.Fatalf("a's NextFree = start + %v, %v; want no earlier than the retry b stored, start + %v",
						at.Sub(start), err, de.RetryAt.Sub(start))
				}
				if n := len(site.robotsHits()); n != fetches {
					t.Errorf("NextFree fetched robots.txt %d times, want none", n-fetches)
				}
				failing.Store(false)
				time.Sleep(time.Until(at))
				if _, err := bubbleGet(t, a, "http://site.example/c"); err != nil {
					t.Errorf("a's request sent at NextFree's time: %v, want it sent", err)
				}
			})
		})
	}
}

// TestNextFreeTakesTheDelayAnotherMemberStored checks that NextFree, on
// a member whose robots.txt copy is due or missing, paces by the newest
// record another member stored, as the request will: a request sent at
// the time it answers goes then, not a Crawl-delay later.
func TestNextFreeTakesTheDelayAnotherMemberStored(t *testing.T) {
	robots := func(delay int) string { return fmt.Sprintf("User-agent: *\nCrawl-delay: %d\n", delay) }
	for _, tc := range []struct {
		name string
		held bool // whether b holds a copy, due by the time it asks
	}{
		{"a copy held and due", true},
		{"no copy held", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var body atomic.Value
				body.Store(robots(1))
				site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Cache-Control", "max-age=60")
					io.WriteString(w, body.Load().(string))
				})
				opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, MaxCrawlDelay: time.Hour, MinFreshness: time.Minute, Fleet: NewMemoryFleet()}
				a, b := NewTransport(site, opts), NewTransport(site, opts)
				if tc.held {
					if _, err := bubbleGet(t, b, "http://site.example/b0"); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Minute) // b's copy, if any, is due
				body.Store(robots(600))
				if _, err := bubbleGet(t, a, "http://site.example/a"); err != nil {
					t.Fatal(err)
				}
				sent := site.hitOf(t, "http://site.example/a").at
				at, err := b.NextFree(context.Background(), "http://site.example/b")
				if err != nil || at.Before(sent.Add(600*time.Second)) {
					t.Fatalf("b's NextFree = a's send + %v, %v; want at least the Crawl-delay a stored, 600s", at.Sub(sent), err)
				}
				time.Sleep(time.Until(at))
				if _, err := bubbleGet(t, b, "http://site.example/b"); err != nil {
					t.Fatal(err)
				}
				if got := site.hitOf(t, "http://site.example/b").at; !got.Equal(at) {
					t.Errorf("b's request sent at NextFree's time reached the site %v later", got.Sub(at))
				}
			})
		})
	}
}

// storeDownFleet is a MemoryFleet whose slots can be made to fail, as a
// store that is down, and whose Load can be made to hang until its
// caller gives up; it counts the Loads asked.
type storeDownFleet struct {
	*MemoryFleet
	failSlots, hang atomic.Bool
	loads           atomic.Int32
}

func (f *storeDownFleet) ReserveSlot(ctx context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	if f.failSlots.Load() {
		return Slot{}, errors.New("store down")
	}
	return f.MemoryFleet.ReserveSlot(ctx, origin, req)
}

func (f *storeDownFleet) Load(ctx context.Context, key RecordKey) ([]byte, bool, error) {
	f.loads.Add(1)
	if f.hang.Load() {
		<-ctx.Done()
		return nil, false, ctx.Err()
	}
	return f.MemoryFleet.Load(ctx, key)
}

// TestNextFreeStoreRead checks NextFree's read of the stored record: a
// context that ends during it is NextFree's error, not an answer made
// without the record; and a store known to be down (a slot it failed to
// reserve) is not read at all, as it is not asked for the slot.
func TestNextFreeStoreRead(t *testing.T) {
	t.Run("a context that ends during the read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fleet := &storeDownFleet{MemoryFleet: NewMemoryFleet()}
			fleet.hang.Store(true)
			tr := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			if at, err := tr.NextFree(ctx, "http://site.example/a"); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("NextFree with the store's read outlasting the context = %v, %v; want the context's error", at, err)
			}
		})
	})
	t.Run("a store known to be down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fleet := &storeDownFleet{MemoryFleet: NewMemoryFleet()}
			fleet.failSlots.Store(true)
			tr := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
			if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil {
				t.Fatal(err)
			}
			fleet.hang.Store(true)
			before := fleet.loads.Load()
			start := time.Now()
			if _, err := tr.NextFree(context.Background(), "http://other.example/a"); err != nil {
				t.Fatal(err)
			}
			if n := fleet.loads.Load() - before; n != 0 || time.Since(start) != 0 {
				t.Errorf("NextFree with the store down read it %d times and took %v; want no read", n, time.Since(start))
			}
		})
	})
}

// TestNextFreeFleet checks that NextFree sees the slots another member of
// the fleet took, through the store, at the delay the site's Crawl-delay
// sets, and that it counts no member and reserves no slot there.
func TestNextFreeFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := newWatchedFleet()
		site := newFakeSite(serve(200, "User-agent: *\nCrawl-delay: 3\n"))
		opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet}
		a, b := NewTransport(site, opts), NewTransport(site, opts)
		if _, err := bubbleGet(t, a, "http://site.example/a"); err != nil {
			t.Fatal(err)
		}
		sent := site.hitOf(t, "http://site.example/a").at
		// b holds the site's robots.txt, from the store, as a member that
		// crawls it does.
		if err := b.Check(context.Background(), "http://site.example/b"); err != nil {
			t.Fatal(err)
		}
		if n := len(site.robotsHits()); n != 1 {
			t.Fatalf("robots.txt fetched %d times, want once, by a: b reads it from the store", n)
		}
		before, _ := fleet.reserved()
		if len(before) != 1 {
			t.Fatalf("%d slots reserved in the store for a's request, want 1", len(before))
		}
		// A store slot lasts its spread; the next is the delay after that.
		want := sent.Add(before[0].Spread + 3*time.Second)
		for range 2 {
			if at, err := b.NextFree(context.Background(), "http://site.example/b"); err != nil || !at.Equal(want) {
				t.Fatalf("the other member's NextFree = %v, %v; want %v", at, err, want)
			}
		}
		if after, _ := fleet.reserved(); len(after) != len(before) {
			t.Errorf("%d slots reserved in the store by NextFree, want none", len(after)-len(before))
		}
		// a's next request goes in the slot NextFree named, and the store
		// counts a alone.
		if _, err := bubbleGet(t, a, "http://site.example/c"); err != nil {
			t.Fatal(err)
		}
		if at := site.hitOf(t, "http://site.example/c").at; !at.Equal(want) {
			t.Errorf("a's next request reached the site %v after the first, want %v", at.Sub(sent), want.Sub(sent))
		}
		if _, slots := fleet.reserved(); slots[len(slots)-1].Members != 1 {
			t.Errorf("the store counts %d members on the site, want 1: NextFree counted one", slots[len(slots)-1].Members)
		}
	})
}

// TestNextFreeCountsTheLine checks that NextFree, with requests of the
// process waiting for the origin, answers the slot after theirs, spaced
// as the line's slots really come: a delay apart alone, a store slot's
// spread added in a fleet, and the delay times the members while the
// store is down; and that a request sent then goes at once.
func TestNextFreeCountsTheLine(t *testing.T) {
	const delay, waiting = time.Second, 3
	for _, tc := range []struct {
		name  string
		fleet bool
		down  bool // the store fails from the second request on
		peeks bool // its NextSlot answers all the same
	}{
		{"alone", false, false, false},
		{"in a fleet", true, false, false},
		{"while the store is down", true, true, false},
		{"while the store fails reservations alone", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				opts := Options{UserAgent: "ExampleBot", MinDelay: delay}
				fleet := newWatchedFleet()
				fleet.members, fleet.nextSlotWhileDown = 3, tc.peeks
				if tc.fleet {
					opts.Fleet = fleet
				}
				tr := NewTransport(site, opts)
				if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
					t.Fatal(err)
				}
				if tc.down {
					fleet.down.Store(true)
					if _, err := bubbleGet(t, tr, "http://site.example/alone"); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				for i := range waiting {
					wg.Go(func() {
						if _, err := bubbleGet(t, tr, fmt.Sprintf("http://site.example/q%d", i)); err != nil {
							t.Error(err)
						}
					})
					synctest.Wait() // in line before the next arrives
				}
				at, err := tr.NextFree(context.Background(), "http://site.example/next")
				if err != nil {
					t.Fatal(err)
				}
				bubbleWaitGroup(t, &wg, "the requests waiting")
				queued := site.hitsWhere(func(h hit) bool { return strings.Contains(h.url, "/q") })
				last, step := queued[waiting-1].at, queued[waiting-1].at.Sub(queued[waiting-2].at)
				if want := last.Add(step); !at.Equal(want) {
					t.Errorf("NextFree with %d waiting = the last one's send + %v, want + %v, the step between their sends", waiting, at.Sub(last), step)
				}
				time.Sleep(time.Until(at))
				req, err := http.NewRequestWithContext(WithMaxWait(context.Background(), 0), http.MethodGet, "http://site.example/next", nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := bubbleRoundTrip(t, tr, req); err != nil {
					t.Fatalf("the request sent at NextFree's time = %v, want it sent at once", err)
				}
				if got := site.hitOf(t, "http://site.example/next").at; !got.Equal(at) {
					t.Errorf("the request sent at NextFree's time reached the site at + %v of it", got.Sub(at))
				}
			})
		})
	}
}

// TestNextFreeAfterTheContextEnds checks that NextFree answers a context
// that ended, before it is called or while the store answers, with the
// context's error, not a time.
func TestNextFreeAfterTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := &silentNextSlot{MemoryFleet: NewMemoryFleet()}
		tr := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if at, err := tr.NextFree(ended, "http://site.example/a"); !errors.Is(err, context.Canceled) {
			t.Errorf("NextFree on a cancelled context = %v, %v; want context.Canceled", at, err)
		}
		ctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		if at, err := tr.NextFree(ctx, "http://site.example/a"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("NextFree whose deadline ends in the store call = %v, %v; want context.DeadlineExceeded", at, err)
		}
		if st := tr.Stats(); st.StoreErrors != 0 || st.StoreFallbacks != 0 {
			t.Errorf("StoreErrors %d, StoreFallbacks %d; want 0: the caller gave up", st.StoreErrors, st.StoreFallbacks)
		}
	})
}

// flushablePace is a MemoryFleet whose pace can be lost at once, as a
// Redis FLUSHALL, an empty restart or a failover to a replica that never
// had it loses it: slots, pauses and epochs.
type flushablePace struct {
	*MemoryFleet // records, leases and budgets, kept
	// down, while set, fails every call of the pace, as a store that
	// does not answer.
	down atomic.Bool
	// paused counts the pauses stored.
	paused atomic.Int32
	// epoch, if not empty, is every slot's epoch, kept through a flush:
	// a replica behind that the fleet failed over to keeps the epoch it
	// copied.
	epoch string
	mu    sync.Mutex
	pace  *MemoryFleet
}

// errPaceDown is what a flushablePace's pace answers while it is down.
var errPaceDown = errors.New("store unavailable")

func newFlushablePace() *flushablePace {
	return &flushablePace{MemoryFleet: NewMemoryFleet(), pace: NewMemoryFleet()}
}

func (f *flushablePace) current() *MemoryFleet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pace
}

func (f *flushablePace) flush() {
	f.mu.Lock()
	f.pace = NewMemoryFleet()
	f.mu.Unlock()
}

func (f *flushablePace) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	if f.down.Load() {
		return Slot{}, errPaceDown
	}
	slot, err := f.current().ReserveSlot(ctx, key, req)
	if f.epoch != "" {
		slot.Epoch = f.epoch
	}
	return slot, err
}

func (f *flushablePace) CancelSlot(ctx context.Context, key OriginKey, at time.Time, interval time.Duration) error {
	if f.down.Load() {
		return errPaceDown
	}
	return f.current().CancelSlot(ctx, key, at, interval)
}

func (f *flushablePace) Pause(ctx context.Context, key OriginKey, until time.Time) error {
	if f.down.Load() {
		return errPaceDown
	}
	f.paused.Add(1)
	return f.current().Pause(ctx, key, until)
}

func (f *flushablePace) NextSlot(ctx context.Context, key OriginKey, req SlotRequest) (time.Time, error) {
	if f.down.Load() {
		return time.Time{}, errPaceDown
	}
	return f.current().NextSlot(ctx, key, req)
}

// TestPausesOutliveAStoreThatLostThem checks that a Retry-After's pause
// the store lost while it was on (a flush, an empty restart, a failover
// to a replica behind that kept its epoch), or never got (it was down),
// is told to it again by the member that received it, once that member
// sees, on any origin, that the store lost a pace (a new epoch) or
// answers again, and without a sign at its next reservation a second or
// more after it last told them: another member, which never asked during
// the pause, sends nothing before it ends.
func TestPausesOutliveAStoreThatLostThem(t *testing.T) {
	for _, tc := range []struct {
		name      string
		down      bool // the 429 comes while the store is down, and it comes back
		keepEpoch bool // the store that lost it answers the epoch it had
		toldJust  bool // a paces an origin, telling its pauses again, just before the loss
	}{
		{"a store that lost it", false, false, false},
		{"a store that lost it just after they were told again", false, false, true},
		{"a replica behind that kept the epoch", false, true, false},
		{"a store down when it came", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) { pausesOutliveAStore(t, tc.down, tc.keepEpoch, tc.toldJust) })
	}
}

func pausesOutliveAStore(t *testing.T, down, keepEpoch, toldJust bool) {
	const pause = time.Minute
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				w.Header().Set("Retry-After", strconv.Itoa(int(pause.Seconds())))
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		fleet := newFlushablePace()
		if keepEpoch {
			fleet.epoch = "kept"
		}
		opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet}
		a, b := NewTransport(site, opts), NewTransport(site, opts)
		// Both members pace both origins through the store, so that
		// each line holds the store's epoch.
		for i, tr := range []*Transport{a, b} {
			for _, origin := range []string{"http://x.example", "http://y.example", "http://z.example"} {
				if _, err := bubbleGet(t, tr, fmt.Sprintf("%s/warm%d", origin, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		fleet.down.Store(down)
		if _, err := bubbleGet(t, a, "http://x.example/busy"); err != nil {
			t.Fatal(err)
		}
		end := site.hitOf(t, "http://x.example/busy").at.Add(pause)
		time.Sleep(5 * time.Second)
		if toldJust {
			if _, err := bubbleGet(t, a, "http://z.example/before"); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if down {
			fleet.down.Store(false)
		} else {
			fleet.flush()
		}
		if !toldJust {
			time.Sleep(time.Second)
		}
		stored := fleet.paused.Load()
		// Each origin a paces next sees the loss; the pause is told
		// again once.
		after := []string{"http://y.example", "http://z.example"}
		if toldJust {
			// b asks at once: the loss a saw must be told then, not a
			// retellAfter after the pauses were last told.
			after = after[:1]
		}
		for _, origin := range after {
			if _, err := bubbleGet(t, a, origin+"/after"); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the pauses a holds are told again
		if n := fleet.paused.Load() - stored; n != 1 {
			t.Errorf("the pause was told again %d times, want once", n)
		}
		if _, err := bubbleGet(t, b, "http://x.example/during"); err != nil {
			t.Fatal(err)
		}
		if at := site.hitOf(t, "http://x.example/during").at; at.Before(end) {
			t.Errorf("the other member sent %v before the pause's end: the store lacked the pause, and nobody told it again", end.Sub(at))
		}
	})
}

// silentNextSlot is a Fleet whose NextSlot never answers: it returns only
// when its context ends.
type silentNextSlot struct{ *MemoryFleet }

func (silentNextSlot) NextSlot(ctx context.Context, _ OriginKey, _ SlotRequest) (time.Time, error) {
	<-ctx.Done()
	return time.Time{}, ctx.Err()
}

// forgetfulFleet is a MemoryFleet whose NextSlot, once forget is set,
// knows no slot: a store that came back empty, or failed over to a
// replica that never had them, before any member reserved again.
type forgetfulFleet struct {
	*MemoryFleet
	forget atomic.Bool
}

func (f *forgetfulFleet) NextSlot(ctx context.Context, key OriginKey, req SlotRequest) (time.Time, error) {
	if f.forget.Load() {
		return latest(req.Now, req.NotBefore), nil
	}
	return f.MemoryFleet.NextSlot(ctx, key, req)
}

// TestNextFreeKeepsWhatTheStoreLost checks that NextFree never answers
// sooner than what a member knows itself, when the store has lost the
// origin's slots: the member that sent, by its own slot, and the member
// refused that slot, by the time the store named then.
func TestNextFreeKeepsWhatTheStoreLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := &forgetfulFleet{MemoryFleet: NewMemoryFleet()}
		site := newFakeSite(nil)
		opts := Options{UserAgent: "ExampleBot", MinDelay: time.Minute, Fleet: fleet}
		a, b := NewTransport(site, opts), NewTransport(site, opts)
		if _, err := bubbleGet(t, a, "http://site.example/a"); err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(WithMaxWait(context.Background(), 0), http.MethodGet, "http://site.example/b", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = bubbleRoundTrip(t, b, req)
		slotErr, ok := errors.AsType[*SlotError](err)
		if !ok {
			t.Fatalf("b's request = %v, want a *SlotError: a holds the slot", err)
		}
		fleet.forget.Store(true)
		for name, tr := range map[string]*Transport{"a, which sent": a, "b, which was refused": b} {
			if at, err := tr.NextFree(context.Background(), "http://site.example/b"); err != nil || at.Before(slotErr.At) {
				t.Errorf("NextFree of %s = %v, %v; want %v or later, the slot after a's", name, at, err, slotErr.At)
			}
		}
	})
}

// TestNextFreeErrors checks what NextFree cannot answer: a URL robots.txt
// does not govern, and a transport whose purposes are unknown.
func TestNextFreeErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTransport(rtFunc(func(*http.Request) (*http.Response, error) {
			t.Error("NextFree sent a request")
			return nil, errors.New("unexpected")
		}), Options{UserAgent: "ExampleBot"})
		for _, u := range []string{"ftp://site.example/a", "/relative", "http:///nohost"} {
			if _, err := tr.NextFree(context.Background(), u); !errors.Is(err, ErrNotHTTP) {
				t.Errorf("NextFree(%q) = %v, want ErrNotHTTP", u, err)
			}
		}
		bad := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", Purposes: []string{"train-ia"}})
		if _, err := bad.NextFree(context.Background(), "http://site.example/"); !errors.Is(err, ErrUnknownPurpose) {
			t.Errorf("NextFree with an unknown purpose = %v, want ErrUnknownPurpose", err)
		}
	})
}

// TestPausesOutlastAFullTable checks that a Retry-After pause holds when
// more origins are paused at once than the pacer's table is sized for
// (1,024 schedules for MaxOrigins 100): their schedules are kept past the
// table's size rather than forgotten, and the table still stops growing
// at its overflow bound, four times that, as Options.MaxOrigins says.
func TestPausesOutlastAFullTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(503)
		})
		tr := newBubbleTransport(site, Options{MaxOrigins: 100})
		const paused, origins, bound = 1500, 6000, 4 * 1024
		for i := range paused {
			if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/", i)); err != nil {
				t.Fatal(err)
			}
		}
		end := time.Now().Add(120 * time.Second)
		for i := range paused {
			at, err := tr.NextFree(context.Background(), fmt.Sprintf("http://host%d.example/", i))
			if err != nil {
				t.Fatal(err)
			}
			if !at.Equal(end) {
				t.Fatalf("host%d.example is free at %v, want the end of its pause, %v: its schedule was forgotten", i, at, end)
			}
		}
		for i := paused; i < origins; i++ {
			if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/", i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := pausedOf(t, tr, origins, end); n > bound {
			t.Errorf("NextFree holds %d of %d paused origins, want at most %d: the schedules grew past their bound", n, origins, bound)
		}
	})
}

// TestNextFreeAfterScheduleDropped checks that NextFree reads the schedule
// an origin's requests are paced by, which the origin keeps when the
// pacer's table has let it go, not a new empty one from the table: an
// origin paused after its schedule left the table is not free. (That the
// schedule left the table is not observable from outside; the planted
// bug, NextFree reading the table, is how the case was shown reached.)
func TestNextFreeAfterScheduleDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(503)
			}
		})
		tr := newBubbleTransport(site, Options{MinDelay: time.Millisecond, MaxOrigins: 300})
		ctx := context.Background()
		send := func(u string) {
			t.Helper()
			if _, err := bubbleGet(t, tr, u); err != nil {
				t.Fatal(err)
			}
		}
		// a.example is used often enough to stay held, while new origins
		// push its schedule, idle between its requests, out of the table.
		for range 20 {
			send("http://a.example/x")
			time.Sleep(time.Second)
		}
		for i := range 1500 {
			if _, err := tr.NextFree(ctx, fmt.Sprintf("http://o%d.example/", i)); err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 {
				send("http://a.example/x")
				time.Sleep(10 * time.Millisecond)
			}
		}
		send("http://a.example/busy")
		if at, err := tr.NextFree(ctx, "http://a.example/y"); err != nil || !at.Equal(time.Now().Add(120*time.Second)) {
			t.Errorf("NextFree = %v, %v during a.example's Retry-After pause; want the pause's end, %v", at, err, time.Now().Add(120*time.Second))
		}
	})
}

// TestSlotBehindTheLineFailsFast checks that a request whose slot lies
// behind the requests already waiting (three, one delay apart) and past
// its deadline fails at once with a *SlotError naming that slot, rather
// than waiting in the line until its deadline ends it, and that the
// waiters ahead keep their slots.
func TestSlotBehindTheLineFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 400 * time.Millisecond
		site := newFakeSite(serve(404, ""))
		tr := newBubbleTransport(site, Options{MinDelay: delay})
		if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
			t.Fatal(err)
		}
		first := site.hitOf(t, "http://site.example/first").at
		errs := make(chan error, 3)
		for i := range 3 {
			go func() { errs <- sendFrom(tr, "http://site.example/w"+strconv.Itoa(i)) }()
		}
		synctest.Wait()
		if n := tr.Stats().Waiting; n != 3 {
			t.Fatalf("%d requests wait in the line, want 3", n)
		}
		want := first.Add(4 * delay)
		if at, err := tr.NextFree(context.Background(), "http://site.example/late"); err != nil || !at.Equal(want) {
			t.Errorf("NextFree behind three waiters = %v after the first send, %v; want four delays (%v)", at.Sub(first), err, 4*delay)
		}
		// Its slot is four delays away (1.6 s), past 1.2 s less a tenth.
		ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/late", nil)
		_, err := bubbleRoundTrip(t, tr, req)
		var se *SlotError
		if !errors.As(err, &se) {
			t.Fatalf("RoundTrip behind three waiters = %v (%T), want a *SlotError", err, err)
		}
		if !se.At.Equal(want) {
			t.Errorf("SlotError.At = %v after the first send, want four delays (%v): the three waiters ahead counted", se.At.Sub(first), 4*delay)
		}
		if d := time.Since(first); d != 0 {
			t.Errorf("the request failed %v after the first send, want at once", d)
		}
		for range 3 {
			if err := bubbleRecv(t, errs, "a waiter's answer"); err != nil {
				t.Error(err)
			}
		}
		got := hitTimes(site.pageHits(), first)
		if w := []time.Duration{0, delay, 2 * delay, 3 * delay}; !slices.Equal(got, w) {
			t.Errorf("requests reached the site at %v, want %v: the late one took no slot", got, w)
		}
	})
}

// TestFreeSlotGoesAtOnce checks that a request whose origin's slot is free
// is sent without sleeping, whatever the nanoseconds of the clock: slots
// are kept to the microsecond, and a free slot rounded up past now must
// not cost a sleep (a timer and a goroutine) on every new origin.
func TestFreeSlotGoesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: time.Second})
		for i := range 20 {
			// Off the microsecond, by more than half of one each time.
			time.Sleep(time.Duration(600+10*i) * time.Nanosecond)
			if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
				t.Fatal(err)
			}
		}
		if w := tr.Stats().Waited; w != 0 {
			t.Errorf("Stats.Waited = %v after 20 requests to new origins, want 0: a free slot was slept toward", w)
		}
	})
}

// TestStorePauseHoldsUnpacedMembers checks that a Retry-After one member
// received holds another member's requests even where no delay paces them
// (MinDelay -1), so that the unpaced path, which takes no slot, still
// reads the store's pause.
func TestStorePauseHoldsUnpacedMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(pausing)
		fleet := NewMemoryFleet()
		a := newBubbleTransport(site, Options{Fleet: fleet})
		b := newBubbleTransport(site, Options{Fleet: fleet})
		start := time.Now()
		if _, err := bubbleGet(t, a, "http://paused.example/busy"); err != nil {
			t.Fatal(err)
		}
		if _, err := bubbleGet(t, b, "http://paused.example/page"); err != nil {
			t.Fatal(err)
		}
		if d := site.hitOf(t, "http://paused.example/page").at.Sub(start); d != time.Hour {
			t.Errorf("the other member's page reached the site %v after the 429, want 1h: the store's pause holds it", d)
		}
	})
}

// TestLateStoreAnswersKeepTheGap checks that a member whose store answers
// come back long after the slot they reserve, even past half the delay,
// gives such a slot back and reserves one that lasts as long as its
// answers take, so that no two members' requests reach the site closer
// than the delay, and that it still gets its requests sent.
func TestLateStoreAnswersKeepTheGap(t *testing.T) {
	const delay = 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		shared := NewMemoryFleet()
		slow := &watchedFleet{MemoryFleet: shared}
		slow.late.Store(int64(60 * time.Millisecond))
		quick := &watchedFleet{MemoryFleet: shared}
		var wg sync.WaitGroup
		for i, fleet := range []Fleet{slow, quick} {
			tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet})
			wg.Go(func() {
				for j := range 6 {
					if _, err := bubbleGet(t, tr, fmt.Sprintf("http://busy.example/m%d-%d", i, j)); err != nil {
						t.Error(err)
					}
				}
			})
		}
		bubbleWaitGroup(t, &wg, "both members' requests")
		if len(slow.givenBack()) == 0 {
			t.Fatal("no slot given back: the test does not reach its case, an answer past its spread")
		}
		slow.checkGivenBack(t)
		hits := site.pageHits()
		if len(hits) != 12 {
			t.Fatalf("%d requests reached the site, want 12", len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].at.Sub(hits[i-1].at); gap < delay {
				t.Errorf("%s reached the site %v after %s, want at least %v", hits[i].url, gap, hits[i-1].url, delay)
			}
		}
	})
}

// TestGivenBackSlotIsTakenAgainAtOnce checks that a slot given back for
// an answer in hand past its spread is forgotten by the member too: its
// request asks again at once, for the slot it gave back, rather than
// waiting a delay for a slot nobody uses, or failing with a *SlotError
// under WithMaxWait.
func TestGivenBackSlotIsTakenAgainAtOnce(t *testing.T) {
	const (
		delay = 100 * time.Millisecond
		late  = 30 * time.Millisecond
	)
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprintf("bounded=%v", bounded), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site, fleet, tr := sentOnce(t, delay)
				fleet.late.Store(int64(late))
				start := time.Now()
				ctx := context.Background()
				if bounded {
					ctx = WithMaxWait(ctx, delay/2)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/second", nil)
				if _, err := bubbleRoundTrip(t, tr, req); err != nil {
					t.Fatalf("RoundTrip = %v, want the page sent", err)
				}
				if len(fleet.givenBack()) == 0 {
					t.Fatal("no slot given back: the test does not reach its case")
				}
				// Two answers, each late: the slot given back, then the
				// one it is taken again with.
				if d := site.hitOf(t, "http://site.example/second").at.Sub(start); d != 2*late {
					t.Errorf("sent %v after it was asked for, want %v: two late answers, no wait for a delay", d, 2*late)
				}
			})
		})
	}
}

// sentOnce returns a site, a watchedFleet and a member pacing at delay
// through it, which sent one request to the site a second ago; in a
// bubble.
func sentOnce(t *testing.T, delay time.Duration) (*fakeSite, *watchedFleet, *Transport) {
	t.Helper()
	site := newFakeSite(nil)
	fleet := &watchedFleet{MemoryFleet: NewMemoryFleet()}
	tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet})
	if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	return site, fleet, tr
}

// TestLateAnswerIsAskedAgainWithTwiceItsLateness checks that a slot
// whose answer came past its spread is asked again with a spread of twice
// that lateness, so that a store growing slower still gets the request
// sent on the second slot: 60 ms late, then 90 ms, against a delay whose
// half (50 ms) caps the spread of a slot asked once.
func TestLateAnswerIsAskedAgainWithTwiceItsLateness(t *testing.T) {
	const delay = 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		site, fleet, tr := sentOnce(t, delay)
		var answers atomic.Int32
		fleet.onReserve = func() {
			if answers.Add(1) > 1 {
				fleet.late.Store(int64(90 * time.Millisecond))
			}
		}
		fleet.late.Store(int64(60 * time.Millisecond))
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://site.example/second"); err != nil {
			t.Fatalf("RoundTrip = %v, want the page sent", err)
		}
		if n := len(fleet.givenBack()); n != 1 {
			t.Errorf("%d slots given back, want 1: the slot asked again is to fit twice the lateness", n)
		}
		if d := site.hitOf(t, "http://site.example/second").at.Sub(start); d != 150*time.Millisecond {
			t.Errorf("sent %v after it was asked for, want 150ms: two answers, 60 and 90 ms late", d)
		}
	})
}

// TestStoreLosingThePaceIsLogged checks that a member logs, once, that the
// store lost an origin's pace when the epoch of its answers changes, and
// never for the first answer it gets.
func TestStoreLosingThePaceIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var logs bytes.Buffer
		fleet := newWatchedFleet()
		fleet.setEpoch("first")
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: time.Second, Fleet: fleet,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		lost := func() int {
			mu.Lock()
			defer mu.Unlock()
			return strings.Count(logs.String(), "store lost the origin's pace")
		}
		for i := range 2 {
			if _, err := bubbleGet(t, tr, "http://site.example/a"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := lost(); n != 0 {
			t.Fatalf("%d losses logged while the epoch held, want none", n)
		}
		fleet.setEpoch("second")
		for i := range 2 {
			if _, err := bubbleGet(t, tr, "http://site.example/b"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := lost(); n != 1 {
			t.Errorf("%d losses logged after the epoch changed once, want 1", n)
		}
	})
}

// TestSlotGivenBackWhenTheCallerLeaves checks that a slot the store
// reserved for a request whose context ended during the call is given
// back as it was reserved, and that nothing is logged as a failure to
// give it back. The request returns at once; the next one waits until
// the store has the slot back, and takes it.
func TestSlotGivenBackWhenTheCallerLeaves(t *testing.T) {
	const lag = 10 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var logs bytes.Buffer
		fleet := newWatchedFleet()
		fleet.cancelLag = lag
		site := newFakeSite(nil)
		tr := newBubbleTransport(site, Options{MinDelay: time.Second, Fleet: fleet,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fleet.onReserve = cancel
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/left", nil)
		left := time.Now()
		if resp, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
			if err == nil {
				resp.Body.Close()
			}
			t.Fatalf("RoundTrip = %v, want the cancellation", err)
		}
		if d := time.Since(left); d != 0 {
			t.Errorf("the request that left returned after %v, want at once", d)
		}
		fleet.onReserve = nil
		if _, err := bubbleGet(t, tr, "http://site.example/next"); err != nil {
			t.Fatal(err)
		}
		if at := site.hitOf(t, "http://site.example/next").at; !at.Equal(left.Add(lag)) {
			t.Errorf("the next request was sent %v after the one that left, want %v: it did not take the slot given back", at.Sub(left), lag)
		}
		if n := len(fleet.givenBack()); n != 1 {
			t.Fatalf("%d slots given back, want the one reserved for the request that left", n)
		}
		fleet.checkGivenBack(t)
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(logs.String(), "cannot give a slot back") {
			t.Errorf("a slot given back was logged as not given back:\n%s", logs.String())
		}
	})
}

// TestSpreadFollowsLateness checks what a member's late store answers
// cost the origin's pace: while they come back late, a slot lasts at
// most half the delay past its time, and once they are quick again the
// spread shrinks back, so that the pace returns to the delay.
func TestSpreadFollowsLateness(t *testing.T) {
	const delay = 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := newWatchedFleet()
		tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet})
		send := func(n int, name string) []time.Duration {
			from := len(site.pageHits())
			for i := range n {
				if _, err := bubbleGet(t, tr, fmt.Sprintf("http://site.example/%s%d", name, i)); err != nil {
					t.Fatal(err)
				}
			}
			hits := site.pageHits()[max(from-1, 0):]
			var gaps []time.Duration
			for i := 1; i < len(hits); i++ {
				gaps = append(gaps, hits[i].at.Sub(hits[i-1].at))
			}
			return gaps
		}
		fleet.late.Store(int64(40 * time.Millisecond))
		slow := send(6, "slow")
		for i, gap := range slow[2:] {
			if gap < delay || gap > delay+delay/2 {
				t.Errorf("gap %d while the store answers 40ms late: %v, want between %v and %v", i+2, gap, delay, delay+delay/2)
			}
		}
		fleet.late.Store(0)
		quick := send(30, "quick")
		if last := quick[len(quick)-1]; last < delay || last > delay+delay/10 {
			t.Errorf("last gap once the store is quick again: %v, want between %v and %v: the spread shrinks back", last, delay, delay+delay/10)
		}
	})
}

// TestWaitingLineOutlivesAFullTable checks that an origin's line of
// waiters is kept while the table of schedules makes room for new
// origins, even where nothing else holds the origin back in this process
// (the store's slot does, which another member took): NextFree still
// counts the waiter.
func TestWaitingLineOutlivesAFullTable(t *testing.T) {
	const delay = time.Hour
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := NewMemoryFleet()
		other := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet})
		tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet, MaxOrigins: 10})
		if _, err := bubbleGet(t, other, "http://held.example/other"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := bubbleGet(t, tr, "http://held.example/waiting")
			done <- err
		}()
		synctest.Wait()
		// More new origins than the table holds, each free at once.
		for i := range 1100 {
			if _, err := bubbleGet(t, tr, fmt.Sprintf("http://new%d.example/", i)); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		next, err := tr.NextFree(context.Background(), "http://held.example/next")
		if err != nil || next.Sub(now) < delay+delay/2 {
			t.Errorf("NextFree = %v, %v, %v from now; want the store's slot and a delay for the waiter, about 2h", next, err, next.Sub(now))
		}
		if err := bubbleRecv(t, done, "the waiting request"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSpreadRemembersLateness checks that the spread follows the
// lateness measured lately, not only the last answer's: a store whose
// answers come back late every other time costs one give-back, the
// first, not one for every late answer after a quick one.
func TestSpreadRemembersLateness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := newWatchedFleet()
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: 100 * time.Millisecond, Fleet: fleet})
		for i := range 8 {
			late := time.Duration(0)
			if i%2 == 0 {
				late = 40 * time.Millisecond
			}
			fleet.late.Store(int64(late))
			if _, err := bubbleGet(t, tr, "http://site.example/p"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(fleet.givenBack()); n != 1 {
			t.Errorf("%d slots given back for 4 late answers among quick ones, want 1: the first", n)
		}
		fleet.checkGivenBack(t)
	})
}

// TestUnpacedRequestTakesNoSlot checks that a request to a held origin
// that nothing paces (MinDelay -1, no Crawl-delay, no pause) goes without
// joining a line or taking a slot: the transport adds one allocation to
// the base's, the request-URI it decides, and nothing for the pace.
func TestUnpacedRequestTakesNoSlot(t *testing.T) {
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(allowAll)), Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	tr := NewTransport(base, Options{UserAgent: "ExampleBot/1.0", MinDelay: -1})
	req, _ := http.NewRequest(http.MethodGet, "http://held.example/page?q=1", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	send := func(rt http.RoundTripper) func() {
		return func() {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	send(tr)() // fetches the robots.txt
	bare, through := testing.AllocsPerRun(200, send(base)), testing.AllocsPerRun(200, send(tr))
	if through > bare+1 {
		t.Errorf("a held, unpaced request allocates %v through the transport, %v on the base alone: want one more at most, its request-URI", through, bare)
	}
}

// TestUnpacedFleetRequestTakesNoSlot checks that an unpaced request of a
// fleet member asks the store for a pause only: the store's answer of
// "free now", rounded to its microsecond and so up to half of one past
// now, is no pause. The clock here is 700 ns past a microsecond.
func TestUnpacedFleetRequestTakesNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := newWatchedFleet()
		tr := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", MinDelay: -1, Fleet: fleet,
			Now: func() time.Time { return time.Now().Add(700 * time.Nanosecond) }})
		for i := range 10 {
			if _, err := bubbleGet(t, tr, "http://held.example/"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		fleet.mu.Lock()
		defer fleet.mu.Unlock()
		if len(fleet.requests) != 0 {
			t.Errorf("%d slots reserved for 10 unpaced requests, want none: %+v", len(fleet.requests), fleet.requests[0])
		}
		if st := tr.Stats(); st.OriginsPaused != 0 {
			t.Errorf("Stats.OriginsPaused = %d, want 0: nothing asked for a pause", st.OriginsPaused)
		}
	})
}

// TestOriginKeepsItsMemberCount checks that an answer counting no
// members does not erase the count the store last gave for that origin:
// during an outage the origin is still paced at the delay times its own
// last count, not at the count last given for any origin.
func TestOriginKeepsItsMemberCount(t *testing.T) {
	const delay = time.Second
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		fleet := newWatchedFleet()
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: fleet})
		for _, step := range []struct {
			url     string
			members int
		}{
			{"http://three.example/a", 3},
			{"http://one.example/a", 1}, // the count last given for any origin
			{"http://three.example/b", 0},
		} {
			fleet.mu.Lock()
			fleet.membersOf = map[OriginKey]int{OriginKey(step.url[:strings.LastIndex(step.url, "/")]): step.members}
			fleet.mu.Unlock()
			time.Sleep(time.Hour)
			if _, err := bubbleGet(t, tr, step.url); err != nil {
				t.Fatal(err)
			}
		}
		fleet.down.Store(true)
		time.Sleep(time.Hour)
		for i := range 3 {
			if _, err := bubbleGet(t, tr, "http://three.example/local"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		sends := site.hitsWhere(func(h hit) bool { return strings.HasPrefix(h.url, "http://three.example/local") })
		for i := 1; i < len(sends); i++ {
			if gap := sends[i].at.Sub(sends[i-1].at); gap != 3*delay {
				t.Errorf("requests %d and %d reached the site %v apart during the outage, want %v: the origin's own count", i-1, i, gap, 3*delay)
			}
		}
	})
}

// TestUnusableStoreSlotsAreBounded checks where the bound on unusable
// store answers lies: a request that gets one fewer than maxTries of
// them in a row, and then a usable slot, is sent; one that gets maxTries
// fails.
func TestUnusableStoreSlotsAreBounded(t *testing.T) {
	for _, tc := range []struct {
		bad  int64
		sent bool
	}{{1, true}, {maxTries - 1, true}, {maxTries, false}} {
		t.Run(strconv.FormatInt(tc.bad, 10), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(serve(404, ""))
				fleet := &unusableFleet{MemoryFleet: NewMemoryFleet(), bad: tc.bad}
				tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: fleet})
				_, err := bubbleGet(t, tr, "http://site.example/page")
				if sent := err == nil; sent != tc.sent {
					t.Errorf("after %d unusable answers: RoundTrip = %v, want sent %v", tc.bad, err, tc.sent)
				}
			})
		})
	}
}

// TestAnswerWithinItsSpreadIsKept checks that a store slot in hand no
// later than its spread is kept, not given back: an answer exactly the
// least spread late costs no second reservation.
func TestAnswerWithinItsSpreadIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fleet := newWatchedFleet()
		fleet.late.Store(int64(minSpread))
		tr := newBubbleTransport(newFakeSite(nil), Options{MinDelay: time.Second, Fleet: fleet})
		if _, err := bubbleGet(t, tr, "http://site.example/page"); err != nil {
			t.Fatal(err)
		}
		if n := len(fleet.givenBack()); n != 0 {
			t.Errorf("%d slots given back for an answer within its spread, want none", n)
		}
	})
}

// steppingClock is a clock that moves on by step at every reading while
// step is set, and by d at every sleep of d: time passes between the slot
// a request takes and its send, as on a loaded machine, deterministically.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// peek reads the clock without moving it.
func (c *steppingClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppingClock) setStep(d time.Duration) {
	c.mu.Lock()
	c.step = d
	c.mu.Unlock()
}

func (c *steppingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	return ctx.Err()
}

// TestNextSlotCountsFromTheSend checks that when time passes between the
// slot a request takes and its send, the next slot counts from the send:
// every other request is slowed (its clock moves at every reading, so its
// send comes well after its slot), and no two requests reach the base
// closer than the delay.
func TestNextSlotCountsFromTheSend(t *testing.T) {
	const delay = 100 * time.Millisecond
	clock := &steppingClock{now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	base, sends := sendClock(clock.peek)
	tr := NewTransport(base, Options{UserAgent: "ExampleBot/1.0", MinDelay: delay, Now: clock.Now, Sleep: clock.Sleep})
	for i := range 8 {
		clock.setStep(time.Duration(i%2) * 30 * time.Millisecond)
		req, _ := http.NewRequest(http.MethodGet, "http://site.example/p"+strconv.Itoa(i), nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	sent := sends()
	for i := 1; i < len(sent); i++ {
		if gap := sent[i].Sub(sent[i-1]); gap < delay {
			t.Errorf("requests %d and %d reached the base %v apart, want at least %v", i-1, i, gap, delay)
		}
	}
}

// pauselessFleet is a MemoryFleet that cannot keep a pause.
type pauselessFleet struct{ *MemoryFleet }

func (pauselessFleet) Pause(context.Context, OriginKey, time.Time) error {
	return errors.New("pause refused")
}

// TestStorePauseFailureKeptLocally checks that a Retry-After the store
// cannot keep is logged as such and still holds this process's next
// request until it ends, as NextFree says, and that one the store keeps
// logs no warning.
func TestStorePauseFailureKeptLocally(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fleet Fleet
		warn  bool
	}{
		{"kept by the store", NewMemoryFleet(), false},
		{"refused by the store", pauselessFleet{NewMemoryFleet()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				site.setPages(pausing)
				var mu sync.Mutex
				var logs bytes.Buffer
				logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
				tr := newBubbleTransport(site, Options{Fleet: tc.fleet, Logger: logger})
				start := time.Now()
				bubbleGet(t, tr, "http://site.example/busy")
				// NextFree tells the pause however little the store knows.
				if at, err := tr.NextFree(context.Background(), "http://site.example/next"); err != nil || !at.Equal(start.Add(time.Hour)) {
					t.Errorf("NextFree = %v, %v; want %v, the pause's end", at, err, start.Add(time.Hour))
				}
				if _, err := bubbleGet(t, tr, "http://site.example/next"); err != nil {
					t.Fatal(err)
				}
				if d := site.hitOf(t, "http://site.example/next").at.Sub(start); d != time.Hour {
					t.Errorf("the next request reached the site %v after the 429, want 1h, the pause's end", d)
				}
				mu.Lock()
				defer mu.Unlock()
				if got := strings.Contains(logs.String(), "store cannot keep a pause"); got != tc.warn {
					t.Errorf("warned of a pause the store cannot keep: %v, want %v; log:\n%s", got, tc.warn, logs.String())
				}
			})
		})
	}
}

// TestPauseEndKeepsArrivalOrder checks that the requests a pause held go
// in the order they came when it ends, each a millisecond after the one
// before: only the line's head takes its slot, the others wait their
// turn rather than race for the slots at the pause's end.
func TestPauseEndKeepsArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		site.setPages(pausing)
		tr := newBubbleTransport(site, Options{MinDelay: time.Millisecond})
		bubbleGet(t, tr, "http://site.example/busy")
		const waiters = 8
		done := make(chan error, waiters)
		for i := range waiters {
			go func() {
				_, err := bubbleGet(t, tr, fmt.Sprintf("http://site.example/%d", i))
				done <- err
			}()
			// Each joins the line before the next comes.
			synctest.Wait()
		}
		for range waiters {
			if err := bubbleRecv(t, done, "a held request's answer"); err != nil {
				t.Fatal(err)
			}
		}
		hits := site.pageHits()[1:]
		for i, h := range hits {
			if want := fmt.Sprintf("http://site.example/%d", i); h.url != want {
				t.Fatalf("request %d to reach the site after the pause was %s, want %s: not in arrival order", i, h.url, want)
			}
		}
	})
}

// TestShorterRetryAfterKeepsThePause checks that a Retry-After shorter
// than the pause already running never shortens it: two answers in
// flight at once, the first asking an hour and the second a minute, hold
// the next request for the hour.
func TestShorterRetryAfterKeepsThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long, short := make(chan struct{}), make(chan struct{})
		site := newFakeSite(nil)
		site.setPages(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/long":
				<-long
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusTooManyRequests)
			case "/short":
				<-short
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		tr := newBubbleTransport(site, Options{})
		done := make(chan error, 2)
		for _, p := range []string{"/long", "/short"} {
			go func() {
				_, err := bubbleGet(t, tr, "http://site.example"+p)
				done <- err
			}()
		}
		synctest.Wait()
		start := time.Now()
		close(long)
		synctest.Wait()
		close(short)
		for range 2 {
			if err := bubbleRecv(t, done, "a 429"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := bubbleGet(t, tr, "http://site.example/next"); err != nil {
			t.Fatal(err)
		}
		if d := site.hitOf(t, "http://site.example/next").at.Sub(start); d != time.Hour {
			t.Errorf("the next request reached the site %v after the pauses, want 1h: a shorter Retry-After cut the pause", d)
		}
	})
}

// sendClock returns a base that allows everything in robots.txt and
// records when each page reaches it, read on now, and the times so far.
func sendClock(now func() time.Time) (http.RoundTripper, func() []time.Time) {
	var mu sync.Mutex
	var sends []time.Time
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(allowAll)), Request: r}, nil
		}
		mu.Lock()
		sends = append(sends, now())
		mu.Unlock()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	return base, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sends)
	}
}

// jumpClock is a clock that moves only when told: jump after the next
// reads readings.
type jumpClock struct {
	steppingClock
	reads int
	jump  time.Duration
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads > 0 {
		if c.reads--; c.reads == 0 {
			c.now = c.now.Add(c.jump)
		}
	}
	return c.now
}

// arm makes the clock jump by d at the reads-th reading from now.
func (c *jumpClock) arm(reads int, d time.Duration) {
	c.mu.Lock()
	c.reads, c.jump = reads, d
	c.mu.Unlock()
}

// jumpingFleet is a transport paced at a delay through a watchedFleet,
// on a jumpClock, and the times its base saw each send.
type jumpingFleet struct {
	clock *jumpClock
	fleet *watchedFleet
	tr    *Transport
	sends func() []time.Time
}

func newJumpingFleet(delay time.Duration) *jumpingFleet {
	clock := &jumpClock{steppingClock: steppingClock{now: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)}}
	base, sends := sendClock(clock.peek)
	fleet := newWatchedFleet()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot/1.0", MinDelay: delay, Fleet: fleet, Now: clock.Now, Sleep: clock.Sleep})
	return &jumpingFleet{clock: clock, fleet: fleet, tr: tr, sends: sends}
}

// get sends a request for path with ctx, under a ceiling only a request
// stuck behind one that never left the line could reach.
func (j *jumpingFleet) get(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, waitCeiling)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example"+path, nil)
	resp, err := j.tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestStoreSlotPassedBeforeTheSendIsTakenAgain checks that a process
// preempted between the store's answer, in time, and the send, past the
// slot's spread, does not send on that slot: the delay would not hold
// from the send for the member taking the next one. The slot is given
// back and a new one taken, and the request goes on it.
func TestStoreSlotPassedBeforeTheSendIsTakenAgain(t *testing.T) {
	const delay = 100 * time.Millisecond
	j := newJumpingFleet(delay)
	clock, fleet, sends := j.clock, j.fleet, j.sends
	get := func(path string) {
		t.Helper()
		if err := j.get(context.Background(), path); err != nil {
			t.Fatal(err)
		}
	}
	get("/first")
	clock.Sleep(context.Background(), time.Second)
	// Every answer is in hand at once (the first reading after it); the
	// second reading, as the request is handed on, comes 10 ms later,
	// far past the first slot's spread, and within the next one's, which
	// is spread by the lateness measured.
	arms := 0
	fleet.onReserve = func() {
		if arms++; arms <= 5 {
			clock.arm(2, 10*time.Millisecond)
		}
	}
	get("/second")
	if n := len(fleet.givenBack()); n != 1 {
		t.Fatalf("%d slots given back, want the one whose spread passed before the send", n)
	}
	fleet.checkGivenBack(t)
	if sent := sends(); len(sent) != 2 || sent[1].Sub(sent[0]) < time.Second {
		t.Errorf("sends at %v, want the second a second after the first, on the slot taken again", sent)
	}
	// The request taken again left the line: the next one goes on its
	// own slot, a delay later.
	fleet.onReserve = nil
	get("/third")
	if sent := sends(); len(sent) != 3 || sent[2].Sub(sent[1]) < delay {
		t.Errorf("sends at %v, want the third a delay after the second", sent)
	}
}

// TestSlotTakenAgainPastTheWaitIsASlotError checks that a request whose
// store slot passed before the send, and whose slot asked again lies past
// its WithMaxWait bound (another member took the next one meanwhile),
// fails with a *SlotError, sends nothing, and is counted in
// Stats.SlotErrors as every such request is.
func TestSlotTakenAgainPastTheWaitIsASlotError(t *testing.T) {
	const delay = 100 * time.Millisecond
	j := newJumpingFleet(delay)
	clock, fleet, tr, sends, get := j.clock, j.fleet, j.tr, j.sends, j.get
	if err := get(context.Background(), "/first"); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(context.Background(), time.Second)
	// The slot's answer is in hand at once, the send 10 ms later, past
	// its spread; meanwhile another member takes the next slot.
	once := false
	fleet.onReserve = func() {
		if once {
			return
		}
		once = true
		clock.arm(2, 10*time.Millisecond)
		now := clock.peek()
		if _, err := fleet.MemoryFleet.ReserveSlot(context.Background(), "http://site.example", SlotRequest{Member: "other", Now: now, Interval: delay}); err != nil {
			t.Error(err)
		}
	}
	err := get(WithMaxWait(context.Background(), delay/2), "/second")
	if _, ok := errors.AsType[*SlotError](err); !ok {
		t.Fatalf("RoundTrip = %v, want a *SlotError: the slot asked again lies past the wait", err)
	}
	if sent := sends(); len(sent) != 1 {
		t.Errorf("sends at %v, want the first alone", sent)
	}
	if n := tr.Stats().SlotErrors; n != 1 {
		t.Errorf("Stats().SlotErrors = %d, want 1", n)
	}
}

// TestHandOnCountsTheNextSlotFromTheSend checks that the waiter a hand-on
// wakes counts from that send: a head that reaches the base a delay after
// its slot, and is preempted once more on the way, is followed a delay
// after its send, not at once on its slot's count, ahead of it.
func TestHandOnCountsTheNextSlotFromTheSend(t *testing.T) {
	// On one P the waiter woken runs only when the hand-on blocks, at the
	// preemption, so the order is the same on every run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	synctest.Test(t, func(t *testing.T) {
		const delay = time.Second
		var preempted atomic.Bool
		now := func() time.Time {
			if preempted.CompareAndSwap(true, false) {
				time.Sleep(delay / 2)
			}
			return time.Now()
		}
		cfg := newConfig(Options{MinDelay: delay, Now: now, Logger: slog.New(slog.DiscardHandler)})
		var p pacer
		p.init(&cfg, newLocalPace(minSchedules, now), nil, now, sleep, &counters{})
		l := p.lines.get("http://site.example")
		ctx := context.Background()
		head, err := p.wait(ctx, l, nil, delay, now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		next := make(chan time.Time, 1)
		go func() {
			tk, err := p.wait(ctx, l, nil, delay, now(), nil)
			if err == nil {
				err = p.handOn(ctx, tk)
			}
			if err != nil {
				t.Error(err)
			}
			next <- time.Now()
		}()
		synctest.Wait()
		time.Sleep(delay)
		preempted.Store(true)
		if err := p.handOn(ctx, head); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		if gap := bubbleRecv(t, next, "the next request's hand-on").Sub(sent); gap < delay {
			t.Errorf("the next request went %v after the late head, want %v or more", gap, delay)
		}
	})
}

// panickingFleet is a Fleet whose first ReserveSlot panics.
type panickingFleet struct {
	Fleet
	panicked atomic.Bool
}

func (f *panickingFleet) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	if f.panicked.CompareAndSwap(false, true) {
		panic("the store's client broke")
	}
	return f.Fleet.ReserveSlot(ctx, key, req)
}

// TestFleetPanicInReserveSlotPacesAlone checks that a request whose
// Fleet panics as it takes its slot is paced as if the store had failed:
// sent on the process's own pace, not failed, its line not held, and the
// next request a delay after it.
func TestFleetPanicInReserveSlotPacesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newFakeSite(nil)
		const delay = time.Second
		tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: &panickingFleet{Fleet: NewMemoryFleet()}})
		start := time.Now()
		for _, path := range []string{"first", "second"} {
			if _, err := bubbleGet(t, tr, "http://site.example/"+path); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		first, second := site.hitOf(t, "http://site.example/first").at, site.hitOf(t, "http://site.example/second").at
		if first.Sub(start) != 0 || second.Sub(first) != delay {
			t.Errorf("sent at +%v and +%v; want at once and a delay later", first.Sub(start), second.Sub(start))
		}
		if n := tr.Stats().StoreErrors; n != 1 {
			t.Errorf("StoreErrors = %d, want the panic counted once", n)
		}
	})
}

// TestHandOnCountsTheMoveOfTheLine checks that a hand-on held up as the
// line moves (here its lock, taken by the test) is still counted from
// when it went: the waiter the move wakes, asleep toward a slot counted
// from the clock read before it, is handed on a delay after the hand-on
// returned. Like the spacing tests it runs on the real clock, since a
// wait for a lock does not let a synctest bubble's clock move; it asserts
// only the gap's lower bound, which a slow machine can only widen.
func TestHandOnCountsTheMoveOfTheLine(t *testing.T) {
	const delay, held = 200 * time.Millisecond, 50 * time.Millisecond
	read := make(chan struct{}, 1)
	var signal atomic.Bool
	now := func() time.Time {
		if signal.CompareAndSwap(true, false) {
			read <- struct{}{}
		}
		return time.Now()
	}
	cfg := newConfig(Options{MinDelay: delay, Now: now, Logger: slog.New(slog.DiscardHandler)})
	var p pacer
	p.init(&cfg, newLocalPace(minSchedules, now), nil, now, sleep, &counters{})
	l := p.lines.get("http://site.example")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	head, err := p.wait(ctx, l, nil, delay, now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The next request is in line before the head goes.
	w := l.join()
	next := make(chan time.Time, 1)
	go func() {
		tk, err := p.hold(ctx, l, w, delay, nil, 0)
		if err == nil {
			err = p.handOn(ctx, tk)
		}
		if err != nil {
			t.Error(err)
		}
		next <- time.Now()
	}()
	l.mu.Lock()
	signal.Store(true)
	handedOn := make(chan time.Time, 1)
	go func() {
		if err := p.handOn(ctx, head); err != nil {
			t.Error(err)
		}
		handedOn <- time.Now()
	}()
	recv(t, read, "the hand-on's clock read")
	time.Sleep(held)
	l.mu.Unlock()
	sent := recv(t, handedOn, "the hand-on")
	if gap := recv(t, next, "the next request's hand-on").Sub(sent); gap < delay-time.Millisecond {
		t.Errorf("the next request went %v after the held-up one, want %v or more", gap, delay)
	}
}

// TestSlotErrorTellsTheTimeLeftWhenRefused checks that a request refused
// its slot after waiting in line names the time its deadline was away
// then, beside the slot's distance then, not the time it had on arrival.
func TestSlotErrorTellsTheTimeLeftWhenRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = time.Second
		fleet := NewMemoryFleet()
		tr := NewTransport(newFakeSite(nil), Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: fleet})
		if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// While the request sleeps toward its slot, another member books
		// the origin until 20 s from now.
		if _, err := fleet.ReserveSlot(context.Background(), "http://site.example", SlotRequest{Member: "other", Now: start, NotBefore: start.Add(20 * time.Second), Interval: delay}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/second", nil)
		_, err := tr.RoundTrip(req)
		se, ok := errors.AsType[*SlotError](err)
		if !ok {
			t.Fatalf("RoundTrip = %v, want a *SlotError", err)
		}
		waited := time.Since(start)
		if want := 10*time.Second - waited; se.Left != want {
			t.Errorf("SlotError.Left = %v after waiting %v, want %v: %v", se.Left, waited, want, se)
		}
	})
}

// TestMemberCountPastAnyFleetIsAWait checks that a store answering a
// member count no fleet has (a broken one, or one on the edge of an
// overflow of the delay times the members) paces, while it is down, at
// the largest count taken, maxMembers: a long wait, never the wrapped
// product's no spacing at all.
func TestMemberCountPastAnyFleetIsAWait(t *testing.T) {
	const delay = 3 * time.Second
	for _, members := range []int{1<<32 - 1, 1 << 31, math.MaxInt} {
		t.Run(fmt.Sprint(members), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(nil)
				fleet := newWatchedFleet()
				fleet.members = members
				tr := newBubbleTransport(site, Options{MinDelay: delay, Fleet: fleet})
				if _, err := bubbleGet(t, tr, "http://site.example/first"); err != nil {
					t.Fatal(err)
				}
				fleet.down.Store(true)
				start := time.Now()
				if _, err := bubbleGet(t, tr, "http://site.example/alone"); err != nil {
					t.Fatal(err)
				}
				// The first store slot's spread comes on top.
				if got, want := site.hitOf(t, "http://site.example/alone").at.Sub(start), maxMembers*delay; got < want || got > want+delay {
					t.Errorf("with %d members and the store down, the next request went after %v, want %v", members, got, want)
				}
				if n := tr.Stats().FleetMembers; n != maxMembers {
					t.Errorf("Stats.FleetMembers = %d, want %d", n, maxMembers)
				}
			})
		})
	}
}
