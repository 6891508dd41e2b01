package robots

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkerPoolKeepsPace checks that a pool of workers with short client
// timeouts on one origin keeps requests reaching the server at the paced
// rate, instead of stalling behind slots that failed-fast or timed-out
// waiters never gave back. It runs on the real clock, as Client.Timeout
// does, so it asserts only what a paused machine cannot break: a pause
// delays a request and never sends one early, so the k-th arrival comes
// at least k delays after the start (no burst); and the pool reaches its
// count of arrivals within waitCeiling, twenty times the delays it needs,
// which a pool stalled behind slots never given back never does.
func TestWorkerPoolKeepsPace(t *testing.T) {
	const (
		workers = 20
		delay   = 200 * time.Millisecond
		want    = 15
	)
	s := newSite(t, serve(200, "User-agent: *\nAllow: /\n"))
	var mu sync.Mutex
	var arrivals []time.Time
	enough := make(chan struct{})
	s.setPages(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if arrivals = append(arrivals, time.Now()); len(arrivals) == want {
			close(enough)
		}
	})
	tr := NewTransport(nil, Options{UserAgent: "ExampleBot", MinDelay: delay})
	t.Cleanup(tr.CloseIdleConnections)
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
				resp, err := client.Get(s.URL + "/page")
				if err != nil {
					// A crawler puts the URL back; a short pause keeps
					// the failed-fast workers from spinning.
					time.Sleep(10 * time.Millisecond)
					continue
				}
				resp.Body.Close()
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(waitCeiling):
		mu.Lock()
		t.Errorf("%d requests reached the server in %v; want %d, one a delay (%v)", len(arrivals), waitCeiling, want, delay)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(arrivals, time.Time.Compare)
	for k, a := range arrivals {
		if early := start.Add(time.Duration(k) * delay); a.Before(early) {
			t.Errorf("request %d reached the server %v after the start, before %d delays (%v)", k, a.Sub(start), k, early.Sub(start))
		}
	}
}

// roundTripWithin is tr.RoundTrip(req) bounded by waitCeiling, reading
// the body: a pacing defect that blocks a request fails the test instead
// of hanging the package.
func roundTripWithin(t *testing.T, tr http.RoundTripper, req *http.Request) (string, error) {
	t.Helper()
	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{string(b), err}
	}()
	r := recv(t, done, "the answer to "+req.Method+" "+req.URL.String())
	return r.body, r.err
}

// getWithin is get bounded by waitCeiling.
func getWithin(t *testing.T, tr http.RoundTripper, url string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return roundTripWithin(t, tr, req)
}

// waiting returns how many requests wait in the schedule of key.
func waiting(tr *Transport, key string) int {
	return tr.pacer.local.schedule(OriginKey(key)).line.len()
}

// TestCancelGivesSlotsBack checks that waiters whose contexts end, in
// whatever order, give their slots back at once: the one left moves up to
// the first slot, one delay after the last request sent, not one per
// waiter gone.
func TestCancelGivesSlotsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []int
	}{
		{"oldest first", []int{0, 1, 2}},
		{"newest first", []int{2, 1, 0}},
		{"middle first", []int{1, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, serve(200, ""))
			c := newClock()
			tr := newTestTransport(t, c, Options{MinDelay: time.Second})
			sleeps := newHeldSleeps(c)
			tr.cfg.sleep = sleeps.sleep
			if _, err := getWithin(t, tr, s.URL+"/first"); err != nil {
				t.Fatal(err)
			}
			sent := c.Now()
			var cancels []context.CancelFunc
			var results []chan error
			for i := range 4 {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				done := make(chan error, 1)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/w"+strconv.Itoa(i), nil)
				go func() {
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					done <- err
				}()
				waitFor(t, fmt.Sprintf("waiter %d to join the line", i), func() bool { return waiting(tr, s.URL) == i+1 })
				cancels, results = append(cancels, cancel), append(results, done)
			}
			for _, i := range tc.order {
				cancels[i]()
				if err := recv(t, results[i], fmt.Sprintf("waiter %d to leave", i)); !errors.Is(err, context.Canceled) {
					t.Errorf("waiter %d: %v, want context.Canceled", i, err)
				}
			}
			// The last waiter sleeps again for its new slot once woken.
			waitFor(t, "the last waiter to sleep for one delay", func() bool { return sleeps.lastIs(time.Second) })
			close(sleeps.release)
			if err := recv(t, results[3], "the last waiter's answer"); err != nil {
				t.Fatalf("last waiter: %v", err)
			}
			if got := c.Now().Sub(sent); got != time.Second {
				t.Errorf("the last waiter went %v after the first request, want one delay (1s); sleeps %v", got, sleeps.asked())
			}
			if n := s.pageHits.Load(); n != 2 {
				t.Errorf("%d pages served, want 2", n)
			}
		})
	}
}

// pausingSite answers /busy with 429 and Retry-After: 3600, and any other
// page with 200, on one server that every host name dials.
func pausingSite(t *testing.T) (*site, http.RoundTripper) {
	s := newSite(t, serve(200, "User-agent: *\nAllow: /\n"))
	s.setPages(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	addr := s.Listener.Addr().String()
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(base.CloseIdleConnections)
	return s, base
}

// TestSlotPastDeadlineFailsFast checks that a request whose slot lies
// past its deadline fails at once and takes no slot, with a *SlotError
// that names the origin and the slot's time and matches
// context.DeadlineExceeded.
func TestSlotPastDeadlineFailsFast(t *testing.T) {
	s, base := pausingSite(t)
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: -1, Now: c.Now, Sleep: c.Sleep})
	if _, err := getWithin(t, tr, "http://paused.example/busy"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://paused.example/page", nil)
	_, err := roundTripWithin(t, tr, req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RoundTrip = %v, want an error matching context.DeadlineExceeded", err)
	}
	var se *SlotError
	if !errors.As(err, &se) {
		t.Fatalf("RoundTrip = %v (%T), want a *SlotError", err, err)
	}
	if want := c.Now().Add(time.Hour); se.Origin != "http://paused.example" || !se.At.Equal(want) {
		t.Errorf("SlotError{Origin: %q, At: %v}, want {http://paused.example, %v}, the pause's end", se.Origin, se.At, want)
	}
	if w := c.Waits(); len(w) != 0 {
		t.Errorf("waits %v before failing, want none", w)
	}
	if _, err := getWithin(t, tr, "http://paused.example/page"); err != nil {
		t.Fatal(err)
	}
	if w := c.Waits(); len(w) != 1 || w[0] != time.Hour {
		t.Errorf("waits %v, want [1h]: the failed request took no slot", w)
	}
	if n := s.pageHits.Load(); n != 2 {
		t.Errorf("%d pages served, want 2", n)
	}
}

// TestPauseOutlivesOrigin checks that a Retry-After pause survives the
// origin's robots.txt being pushed out of memory by other origins.
func TestPauseOutlivesOrigin(t *testing.T) {
	_, base := pausingSite(t)
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: -1, MaxOrigins: 2, Now: c.Now, Sleep: c.Sleep})
	if _, err := getWithin(t, tr, "http://paused.example/busy"); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := getWithin(t, tr, "http://site"+strconv.Itoa(i)+".example/page"); err != nil {
			t.Fatal(err)
		}
	}
	if n := tr.origins.len(); n > 2 {
		t.Fatalf("%d origins held, want at most 2", n)
	}
	if _, err := getWithin(t, tr, "http://paused.example/page"); err != nil {
		t.Fatal(err)
	}
	if w := c.Waits(); len(w) != 1 || w[0] != time.Hour {
		t.Errorf("waits %v, want [1h]: the pause outlives the origin", w)
	}
}

// TestWaitPastFreshnessDecidesAgain checks that a request decided on a
// robots.txt that goes stale while it waits is decided again, on the
// fresh robots.txt, before it is sent.
func TestWaitPastFreshnessDecidesAgain(t *testing.T) {
	s, base := pausingSite(t)
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: -1, Freshness: time.Hour, Now: c.Now, Sleep: c.Sleep})
	if _, err := getWithin(t, tr, "http://site.example/busy"); err != nil {
		t.Fatal(err)
	}
	s.setRobots(serve(200, "User-agent: *\nDisallow: /page\n"))
	if _, err := getWithin(t, tr, "http://site.example/page"); !errors.Is(err, ErrDisallowed) {
		t.Fatalf("RoundTrip = %v, want ErrDisallowed from the robots.txt fetched after the wait", err)
	}
	if n := s.pageHits.Load(); n != 1 {
		t.Errorf("%d pages served, want only /busy", n)
	}
	if n := s.robotsHits.Load(); n != 2 {
		t.Errorf("%d robots.txt fetches, want 2", n)
	}
}

// heldSleeps is an Options.Sleep that holds every wait until release is
// closed (or the waiter's context ends), then moves c on by it, and
// records the waits asked for.
type heldSleeps struct {
	c       *testClock
	release chan struct{}

	// mu protects waits.
	mu    sync.Mutex
	waits []time.Duration
}

func newHeldSleeps(c *testClock) *heldSleeps {
	return &heldSleeps{c: c, release: make(chan struct{})}
}

func (h *heldSleeps) sleep(ctx context.Context, d time.Duration) error {
	h.mu.Lock()
	h.waits = append(h.waits, d)
	h.mu.Unlock()
	select {
	case <-h.release:
		h.c.Advance(d)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lastIs reports whether the latest wait asked for is d.
func (h *heldSleeps) lastIs(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waits) > 0 && h.waits[len(h.waits)-1] == d
}

// asked returns the waits asked for so far.
func (h *heldSleeps) asked() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.waits...)
}

// fleetStub is a fleet store in memory for one process: its slots follow
// Fleet's contract, and while down is set each reservation fails
// after taking lag on the clock, as a Redis call that times out.
type fleetStub struct {
	*fleetStore
	clock   *testClock
	lag     time.Duration
	members int
	down    atomic.Bool

	mu           sync.Mutex
	last, paused time.Time
}

func (f *fleetStub) ReserveSlot(ctx context.Context, key OriginKey, req SlotRequest) (Slot, error) {
	if f.down.Load() {
		f.clock.Advance(f.lag)
		return Slot{}, errors.New("store unavailable")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	at := latest(req.Now, req.NotBefore, f.paused)
	if !f.last.IsZero() {
		at = latest(at, f.last.Add(req.Interval))
	}
	if !req.Limit.IsZero() && at.After(req.Limit) {
		return Slot{At: at, Members: f.members}, nil
	}
	f.last = at
	return Slot{At: at, Reserved: true, Members: f.members}, nil
}

func (f *fleetStub) CancelSlot(ctx context.Context, key OriginKey, at time.Time, interval time.Duration) error {
	return nil
}

func (f *fleetStub) Pause(ctx context.Context, key OriginKey, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = latest(f.paused, until)
	return nil
}

func (f *fleetStub) NextSlot(ctx context.Context, key OriginKey, req SlotRequest) (time.Time, error) {
	if f.down.Load() {
		return time.Time{}, errors.New("store unavailable")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return latest(req.Now, f.paused), nil
}

// sendLog is a base that answers robots.txt with allowAll and records
// the time, on clock, at which each other request is sent.
type sendLog struct {
	clock *testClock
	mu    sync.Mutex
	sends []time.Time
}

const allowAll = "User-agent: *\nAllow: /\n"

func (l *sendLog) RoundTrip(r *http.Request) (*http.Response, error) {
	body := allowAll
	if r.URL.Path != "/robots.txt" {
		l.mu.Lock()
		l.sends = append(l.sends, l.clock.Now())
		l.mu.Unlock()
		body = "page"
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

func (l *sendLog) times() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sends)
}

// TestFleetFallbackKeepsOwnPace checks that a request paced alone after a
// failed store call is never sent sooner than the process's own last send
// plus the delay: the slot the store granted before reaches the local
// schedule, and the local slot counts from the clock read after the failed
// call (which took lag), not before it. With members, the fallback paces
// at the delay times the members last seen.
func TestFleetFallbackKeepsOwnPace(t *testing.T) {
	const delay = time.Second
	for _, tc := range []struct {
		name    string
		after   time.Duration // between the shared request and the next
		lag     time.Duration // that each failed store call takes
		members int
		gaps    []time.Duration // between sends, on the clock
	}{
		{"a quick failure right after a shared slot", 100 * time.Millisecond, 0, 1, []time.Duration{delay + minSpread, delay, delay}},
		{"a slow failure", 1100 * time.Millisecond, 400 * time.Millisecond, 1, []time.Duration{1500 * time.Millisecond, 1400 * time.Millisecond, 1400 * time.Millisecond}},
		{"three members last seen", 100 * time.Millisecond, 0, 3, []time.Duration{3*delay + minSpread, 3 * delay, 3 * delay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			base := &sendLog{clock: c}
			store := &fleetStub{fleetStore: newFleetStore(), clock: c, lag: tc.lag, members: tc.members}
			tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: store, Now: c.Now, Sleep: c.Sleep})
			if _, err := getWithin(t, tr, "http://fleet.example/shared"); err != nil {
				t.Fatal(err)
			}
			store.down.Store(true)
			c.Advance(tc.after)
			for i := range len(tc.gaps) {
				if _, err := getWithin(t, tr, "http://fleet.example/local"+strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
			sends := base.times()
			var gaps []time.Duration
			for i := 1; i < len(sends); i++ {
				gaps = append(gaps, sends[i].Sub(sends[i-1]))
			}
			if !slices.Equal(gaps, tc.gaps) {
				t.Errorf("sends %v apart, want %v", gaps, tc.gaps)
			}
		})
	}
}

// sendFrom sends a GET for url through tr, for a goroutine of a test: it
// returns the error, if any, instead of failing the test.
func sendFrom(tr http.RoundTripper, url string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestPauseHoldsWaiters checks that a Retry-After holds the requests
// already waiting in line, not only those that come after it: a waiter
// booked a delay after the request that was answered 429 sleeps again
// until the pause ends, and is sent no sooner.
func TestPauseHoldsWaiters(t *testing.T) {
	answer := make(chan struct{})
	s := newSite(t, serve(200, allowAll))
	s.setPages(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			hold(r, answer)
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	c := newClock()
	tr := newTestTransport(t, c, Options{MinDelay: time.Second})
	sleeps := newHeldSleeps(c)
	tr.cfg.sleep = sleeps.sleep
	busy := make(chan error, 1)
	go func() { busy <- sendFrom(tr, s.URL+"/busy") }()
	waitFor(t, "the request for /busy to reach the site", func() bool { return s.pageHits.Load() == 1 })
	waiter := make(chan error, 1)
	go func() { waiter <- sendFrom(tr, s.URL+"/page") }()
	waitFor(t, "a request to wait in line", func() bool { return waiting(tr, s.URL) == 1 })
	paused := c.Now().Add(time.Hour)
	close(answer)
	if err := recv(t, busy, "the answer to /busy"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the waiter to sleep until the pause's end", func() bool { return sleeps.lastIs(time.Hour) })
	close(sleeps.release)
	if err := recv(t, waiter, "the waiter's answer"); err != nil {
		t.Fatal(err)
	}
	if now := c.Now(); now.Before(paused) {
		t.Errorf("the waiter was sent %v before the pause ended", paused.Sub(now))
	}
}

// unusableStore answers every reservation with a slot a second from now,
// whatever the pause, as a store that kept its pause in the wrong unit
// would, and counts the reservations.
type unusableStore struct {
	*fleetStore
	calls atomic.Int64
}

func (u *unusableStore) ReserveSlot(_ context.Context, _ OriginKey, req SlotRequest) (Slot, error) {
	u.calls.Add(1)
	return Slot{At: req.Now.Add(time.Second), Reserved: true, Members: 1}, nil
}

// TestUnusableStoreSlotsFail checks that a request whose store keeps
// answering slots it was not asked for (reserved later than the Limit
// of now) fails after a bounded number of answers, with an error,
// rather than reserving, giving back and reserving again for ever, and
// never goes in such a slot.
func TestUnusableStoreSlotsFail(t *testing.T) {
	s := newSite(t, serve(404, ""))
	c := newClock()
	store := &unusableStore{fleetStore: newFleetStore()}
	tr := NewTransport(s.Client().Transport, Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: store, Now: c.Now, Sleep: c.Sleep})
	_, err := getWithin(t, tr, s.URL+"/page")
	if err == nil || !strings.Contains(err.Error(), "no usable politeness slot") {
		t.Fatalf("RoundTrip = %v, want the error that the store's slots are unusable", err)
	}
	if n := store.calls.Load(); n > maxTries {
		t.Errorf("%d reservations for one request, want at most %d", n, maxTries)
	}
	if n := s.pageHits.Load(); n != 0 {
		t.Errorf("%d pages served in slots the store was not asked for", n)
	}
}

// TestNewOriginsCostFlat sends one request to each of 50,000 new origins
// through a transport holding 1,000, every delay still running (an hour):
// the pacer's table stays within its overflow bound, and a new origin costs the
// same however full the table: the last 2,000 origins, each making room
// in a full table, take at most ten times as long as the first 2,000, for
// which the table had room, or a few seconds (a scan of the table per new
// origin makes them a hundred times dearer), and the whole run ends
// within a ceiling.
func TestNewOriginsCostFlat(t *testing.T) {
	const origins, maxOrigins, probe = 50000, 1000, 2000
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		body := "page"
		if r.URL.Path == "/robots.txt" {
			body = allowAll
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: time.Hour, MaxOrigins: maxOrigins, Now: c.Now, Sleep: c.Sleep})
	run := func(from, to int) time.Duration {
		start := time.Now()
		const workers = 4
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := from + w; i < to; i += workers {
					if err := sendFrom(tr, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		waitGroupWithin(t, &wg, 45*time.Second, fmt.Sprintf("a request to each of origins %d to %d", from, to))
		return time.Since(start)
	}
	first := run(0, probe)
	run(probe, origins-probe)
	last := run(origins-probe, origins)
	// Every schedule is busy, its delay running: the table grows to its
	// overflow bound, four times its size, and no further.
	if n, most := tr.pacer.local.len(), 4*4*maxOrigins; n > most {
		t.Errorf("the pacer holds %d schedules, want at most %d", n, most)
	}
	t.Logf("first %d new origins in %v, last %d in %v", probe, first.Round(time.Millisecond), probe, last.Round(time.Millisecond))
	// Generous, as every wall-clock bound here: a scan of the table per
	// new origin makes the last ones dozens of times dearer, seconds more,
	// where a pause of the machine adds at most a few seconds once.
	if last > 10*first && last > 3*time.Second {
		t.Errorf("the last %d new origins took %v, over ten times the first %d (%v)", probe, last, probe, first)
	}
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
			c := newClock()
			var sends []time.Time
			base := rtFunc(func(r *http.Request) (*http.Response, error) {
				status, body, h := 200, "page", http.Header{}
				switch {
				case r.URL.Path == "/robots.txt" && tc.robots == "503":
					status = 503
				case r.URL.Path == "/robots.txt":
					body = cmp.Or(tc.robots, allowAll)
				default:
					sends = append(sends, c.Now())
					if len(sends) == 1 && tc.page == 503 {
						status = 503
						h.Set("Retry-After", "120")
					}
				}
				return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			})
			tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: delay, Now: c.Now, Sleep: c.Sleep})
			ctx := context.Background()
			start := c.Now()
			if at, err := tr.NextFree(ctx, "http://site.example/a"); err != nil || !at.Equal(start) {
				t.Fatalf("NextFree before any request = %v, %v; want now, %v", at, err, start)
			}
			if _, err := getWithin(t, tr, "http://site.example/a"); err != nil && !errors.Is(err, ErrDisallowed) {
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
			c.Advance(tc.want)
			if _, err := getWithin(t, tr, "http://site.example/b"); err != nil {
				t.Fatal(err)
			}
			if w := c.Waits(); len(w) != 0 {
				t.Errorf("the request sent at NextFree's time waited %v", w)
			}
		})
	}
}

// TestNextFreeFleet checks that NextFree sees the slots another member of
// the fleet took, through the store, at the delay the site's Crawl-delay
// sets, and that it counts no member and reserves no slot there.
func TestNextFreeFleet(t *testing.T) {
	c := newClock()
	store := newFleetStore()
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 3\n")), Request: r}, nil
	})
	opts := Options{UserAgent: "ExampleBot", MinDelay: time.Second, Fleet: store, Now: c.Now, Sleep: c.Sleep}
	a, b := NewTransport(base, opts), NewTransport(base, opts)
	if _, err := getWithin(t, a, "http://site.example/a"); err != nil {
		t.Fatal(err)
	}
	sent := c.Now()
	// b holds the site's robots.txt, from the store, as a member that
	// crawls it does.
	if err := b.Check(context.Background(), "http://site.example/b"); err != nil {
		t.Fatal(err)
	}
	want := sent.Add(3 * time.Second)
	for range 2 {
		if at, err := b.NextFree(context.Background(), "http://site.example/b"); err != nil || !at.Equal(want) {
			t.Fatalf("the other member's NextFree = %v, %v; want %v", at, err, want)
		}
	}
	store.mu.Lock()
	last := store.last["http://site.example"]
	store.mu.Unlock()
	if !last.Equal(sent) {
		t.Errorf("the store's last slot moved from %v to %v: NextFree reserved", sent, last)
	}
}

// TestNextFreeErrors checks what NextFree cannot answer: a URL robots.txt
// does not govern, and a transport whose purposes are unknown.
func TestNextFreeErrors(t *testing.T) {
	tr := NewTransport(rtFunc(func(*http.Request) (*http.Response, error) {
		t.Error("NextFree sent a request")
		return nil, errors.New("unexpected")
	}), Options{UserAgent: "ExampleBot"})
	for _, u := range []string{"ftp://site.example/a", "/relative", "http:///nohost"} {
		if _, err := tr.NextFree(context.Background(), u); !errors.Is(err, ErrNotHTTP) {
			t.Errorf("NextFree(%q) = %v, want ErrNotHTTP", u, err)
		}
	}
	bad := NewTransport(nil, Options{UserAgent: "ExampleBot", Purposes: []string{"train-ia"}})
	if _, err := bad.NextFree(context.Background(), "http://site.example/"); !errors.Is(err, ErrUnknownPurpose) {
		t.Errorf("NextFree with an unknown purpose = %v, want ErrUnknownPurpose", err)
	}
}

// TestPausesOutlastAFullTable checks that a Retry-After pause holds when
// more origins are paused at once than the pacer's table is sized for:
// their schedules are kept past the table's size rather than forgotten,
// and the table still stops growing at its overflow bound.
func TestPausesOutlastAFullTable(t *testing.T) {
	c := newClock()
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		status, body, h := 200, allowAll, http.Header{}
		if r.URL.Path != "/robots.txt" {
			status, body = 503, "busy"
			h.Set("Retry-After", "120")
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	// MaxOrigins 100: 100 robots.txt held, 1,024 schedules sized for.
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: -1, MaxOrigins: 100, Now: c.Now, Sleep: c.Sleep})
	const paused = 1500
	for i := range paused {
		if _, err := getWithin(t, tr, fmt.Sprintf("http://host%d.example/", i)); err != nil {
			t.Fatal(err)
		}
	}
	end := c.Now().Add(120 * time.Second)
	for i := range paused {
		at, err := tr.NextFree(context.Background(), fmt.Sprintf("http://host%d.example/", i))
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(end) {
			t.Fatalf("host%d.example is free at %v, during its pause (until %v): its schedule was forgotten", i, at, end)
		}
	}
	for i := paused; i < 6000; i++ {
		if _, err := getWithin(t, tr, fmt.Sprintf("http://host%d.example/", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, most := tr.pacer.local.len(), 4*minSchedules; n > most {
		t.Errorf("the pacer holds %d schedules, want at most %d", n, most)
	}
}

// TestNextFreeAfterScheduleDropped checks that NextFree reads the schedule
// an origin's requests are paced by, which the origin keeps when the
// pacer's table has let it go, not a new empty one from the table: an
// origin paused after its schedule left the table is not free.
func TestNextFreeAfterScheduleDropped(t *testing.T) {
	c := newClock()
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		status, body, h := 200, allowAll, http.Header{}
		if r.URL.Path == "/busy" {
			status = 503
			h.Set("Retry-After", "120")
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: time.Millisecond, MaxOrigins: 300, Now: c.Now, Sleep: c.Sleep})
	ctx := context.Background()
	send := func(u string) {
		t.Helper()
		if _, err := getWithin(t, tr, u); err != nil {
			t.Fatal(err)
		}
	}
	// a.example is used often enough to stay held, while new origins push
	// its schedule, idle between its requests, out of the table.
	for range 20 {
		send("http://a.example/x")
		c.Advance(time.Second)
	}
	for i := range 1500 {
		if _, err := tr.NextFree(ctx, fmt.Sprintf("http://o%d.example/", i)); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			send("http://a.example/x")
			c.Advance(10 * time.Millisecond)
		}
	}
	o := tr.origins.originFor(originID{host: "a.example"})
	if tr.pacer.local.table[o.key] == o.sched.Load() {
		t.Fatal("a.example's schedule is still in the table: the test does not reach its case")
	}
	send("http://a.example/busy")
	if at, err := tr.NextFree(ctx, "http://a.example/y"); err != nil || !at.After(c.Now()) {
		t.Errorf("NextFree = %v, %v during a.example's Retry-After pause; want the pause's end", at, err)
	}
}

// TestSlotBehindTheLineFailsFast checks that a request whose slot lies
// behind the requests already waiting (three, one delay apart) and past
// its deadline fails at once with a *SlotError naming that slot, rather
// than waiting in the line until its deadline ends it.
func TestSlotBehindTheLineFailsFast(t *testing.T) {
	s := newSite(t, serve(404, ""))
	const delay = 400 * time.Millisecond
	var first time.Time
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/first" {
			first = time.Now()
		}
		return s.Client().Transport.RoundTrip(r)
	})
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: delay})
	if _, err := getWithin(t, tr, s.URL+"/first"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for i := range 3 {
		go func() { errs <- sendFrom(tr, s.URL+"/w"+strconv.Itoa(i)) }()
	}
	waitFor(t, "three requests to wait in the line", func() bool { return tr.Stats().Waiting == 3 })
	if at, err := tr.NextFree(context.Background(), s.URL+"/late"); err != nil || at.Before(first.Add(4*delay-time.Millisecond)) {
		t.Errorf("NextFree behind three waiters = %v after the first send, %v; want four delays (%v)", at.Sub(first), err, 4*delay)
	}
	// Its slot is four delays away (1.6 s), past 1.2 s less a tenth.
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/late", nil)
	_, err := tr.RoundTrip(req)
	var se *SlotError
	if !errors.As(err, &se) {
		t.Fatalf("RoundTrip behind three waiters = %v (%T), want a *SlotError", err, err)
	}
	if want := first.Add(4 * delay); se.At.Before(want.Add(-time.Millisecond)) {
		t.Errorf("SlotError.At = %v after the first send, want four delays (%v): the three waiters ahead counted", se.At.Sub(first), 4*delay)
	}
	for range 3 {
		if err := recv(t, errs, "a waiter's answer"); err != nil {
			t.Error(err)
		}
	}
}
