package robots

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/fakeclock"
)

// testClock is the tests' injected clock.
type testClock = fakeclock.Clock

func newClock() *testClock { return fakeclock.New() }

// site is one httptest server: /robots.txt is answered by a handler the
// test sets, every other path with 200 and the path, and both are counted.
type site struct {
	*httptest.Server
	robotsHits atomic.Int64
	pageHits   atomic.Int64

	mu     sync.Mutex
	robots http.HandlerFunc
	pages  http.HandlerFunc
}

func newSite(t *testing.T, robots http.HandlerFunc) *site {
	t.Helper()
	s := &site{robots: robots}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		robots, pages := s.robots, s.pages
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			s.robotsHits.Add(1)
			robots(w, r)
			return
		}
		s.pageHits.Add(1)
		if pages != nil {
			pages(w, r)
			return
		}
		io.WriteString(w, "page "+r.URL.RequestURI())
	}))
	t.Cleanup(s.Close)
	return s
}

// serve returns a handler answering with status and body.
func serve(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func (s *site) setPages(h http.HandlerFunc) {
	s.mu.Lock()
	s.pages = h
	s.mu.Unlock()
}

// allowAll is a robots.txt that allows everything.
const allowAll = "User-agent: *\nAllow: /\n"

// fakeSite is a site in memory, the base RoundTripper of the tests that
// run in a testing/synctest bubble: /robots.txt is answered by a handler
// the test sets, every other path by another (with none, 200 and the
// path), on whatever host the request names, and every request that
// reaches it is recorded with the bubble's time. No network: a bubble's
// time moves only while every goroutine in it waits durably, which a
// goroutine reading a socket does not, so a server would either stall
// the clock or answer outside it. It is safe for concurrent use.
type fakeSite struct {
	// mu protects the fields below.
	mu     sync.Mutex
	robots http.HandlerFunc
	pages  http.HandlerFunc
	hits   []hit
}

// hit is one request that reached a fakeSite.
type hit struct {
	at     time.Time // on the bubble's clock
	url    string    // scheme, host, path and query, as sent
	header http.Header
}

// newFakeSite returns a fakeSite answering /robots.txt with robots (nil:
// allowAll).
func newFakeSite(robots http.HandlerFunc) *fakeSite {
	if robots == nil {
		robots = serve(200, allowAll)
	}
	return &fakeSite{robots: robots}
}

func (s *fakeSite) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.hits = append(s.hits, hit{at: time.Now(), url: r.URL.String(), header: r.Header.Clone()})
	h := s.pages
	if r.URL.Path == "/robots.txt" {
		h = s.robots
	}
	s.mu.Unlock()
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.RequestURI()) }
	}
	rec := httptest.NewRecorder()
	h(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

func (s *fakeSite) setRobots(h http.HandlerFunc) {
	s.mu.Lock()
	s.robots = h
	s.mu.Unlock()
}

func (s *fakeSite) setPages(h http.HandlerFunc) {
	s.mu.Lock()
	s.pages = h
	s.mu.Unlock()
}

// robotsHits returns the requests for /robots.txt so far, in order.
func (s *fakeSite) robotsHits() []hit {
	return s.hitsWhere(func(h hit) bool { return strings.HasSuffix(h.url, "/robots.txt") })
}

// pageHits returns the requests for anything but /robots.txt so far, in
// order.
func (s *fakeSite) pageHits() []hit {
	return s.hitsWhere(func(h hit) bool { return !strings.HasSuffix(h.url, "/robots.txt") })
}

// hitOf returns the request for url, failing the test unless exactly one
// reached the site.
func (s *fakeSite) hitOf(t testing.TB, url string) hit {
	t.Helper()
	hits := s.hitsWhere(func(h hit) bool { return h.url == url })
	if len(hits) != 1 {
		t.Fatalf("%d requests for %s reached the site, want 1", len(hits), url)
	}
	return hits[0]
}

func (s *fakeSite) hitsWhere(keep func(hit) bool) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hit
	for _, h := range s.hits {
		if keep(h) {
			out = append(out, h)
		}
	}
	return out
}

// hitTimes returns the times of hits, each as the time since start.
func hitTimes(hits []hit, start time.Time) []time.Duration {
	out := make([]time.Duration, len(hits))
	for i, h := range hits {
		out[i] = h.at.Sub(start)
	}
	return out
}

// newBubbleTransport returns a transport on base for a test in a
// synctest bubble, on the bubble's clock (no Options.Now or Sleep), that
// does not space requests unless the test asks for it.
func newBubbleTransport(base http.RoundTripper, opts Options) *Transport {
	if opts.UserAgent == "" {
		opts.UserAgent = "ExampleBot/1.0"
	}
	if opts.MinDelay == 0 {
		opts.MinDelay = -1
	}
	return NewTransport(base, opts)
}

// newTestTransport returns a transport on the test clock that does not
// space requests unless a test asks for it.
func newTestTransport(t *testing.T, c *testClock, opts Options) *Transport {
	t.Helper()
	if opts.UserAgent == "" {
		opts.UserAgent = "ExampleBot/1.0"
	}
	if opts.MinDelay == 0 {
		opts.MinDelay = -1
	}
	opts.Now, opts.Sleep = c.Now, c.Sleep
	tr := NewTransport(nil, opts)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// get sends a GET for path on s through tr and returns the response body
// or the error.
func get(t *testing.T, tr http.RoundTripper, url string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// trackedBody is a request or response body that records its Close.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func newTrackedBody(s string) *trackedBody { return &trackedBody{Reader: strings.NewReader(s)} }

func (b *trackedBody) Close() error {
	b.closed.Store(true)
	return nil
}

// rtFunc is a RoundTripper written as a function, for stub bases.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// robotsLog is a stub base that answers every request with status and
// body, and records the URL of every request for /robots.txt.
type robotsLog struct {
	status int
	body   string

	mu   sync.Mutex
	urls []string
}

func (l *robotsLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/robots.txt" {
		l.mu.Lock()
		l.urls = append(l.urls, r.URL.String())
		l.mu.Unlock()
	}
	return &http.Response{StatusCode: l.status, Body: io.NopCloser(strings.NewReader(l.body)), Request: r}, nil
}

// fetched returns the robots.txt URLs requested so far, in order.
func (l *robotsLog) fetched() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

// freshRecord is a record of privateRobots fetched at now and fresh for an
// hour, as another process would store it.
func freshRecord(now time.Time) record {
	return record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), FetchedAt: now, Expires: now.Add(time.Hour)}
}

// waitCeiling bounds every wait in the tests: a ceiling so generous that
// only a real defect (a lost wake-up, a deadlock, a pool stalled behind
// slots never given back) reaches it on a loaded, paused machine, and well
// under go test's own timeout, so that one hung test fails by name instead
// of hiding every test after it.
const waitCeiling = time.Minute

// recv receives from ch, failing the test with what it was waiting for
// once waitCeiling has passed.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return recvWithin(t, ch, waitCeiling, what)
}

// recvWithin is recv with a ceiling of its own.
func recvWithin[T any](t testing.TB, ch <-chan T, ceiling time.Duration, what string) T {
	t.Helper()
	tm := time.NewTimer(ceiling)
	defer tm.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.C:
		t.Fatalf("still waiting, after %v, for %s", ceiling, what)
	}
	var zero T
	return zero
}

// bubbleCeiling bounds every wait of a test in a synctest bubble, on the
// bubble's clock: longer than any wait a transport asks for (a
// Retry-After pause lasts at most MaxBackoff, 4 hours by default), and
// free, since a bubble whose goroutines all wait moves its clock to the
// next timer at once. A lost wake-up fails the test in no real time.
const bubbleCeiling = 24 * time.Hour

// bubbleRecv is recv in a synctest bubble, bounded by bubbleCeiling.
func bubbleRecv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return recvWithin(t, ch, bubbleCeiling, what)
}

// bubbleWaitGroup is waitGroup in a synctest bubble, bounded by
// bubbleCeiling.
func bubbleWaitGroup(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	waitGroupWithin(t, wg, bubbleCeiling, what)
}

// waitGroup waits for wg, failing the test with what it was waiting for
// once waitCeiling has passed.
func waitGroup(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	waitGroupWithin(t, wg, waitCeiling, what)
}

// waitGroupWithin is waitGroup with a ceiling of its own, for a wait on
// work that takes long under -race on a loaded machine.
func waitGroupWithin(t testing.TB, wg *sync.WaitGroup, ceiling time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	tm := time.NewTimer(ceiling)
	defer tm.Stop()
	select {
	case <-done:
	case <-tm.C:
		t.Fatalf("still waiting, after %v, for %s", ceiling, what)
	}
}

// hold blocks a test server's handler until release is closed or r's
// context ends, and at most waitCeiling, so that a test that fails before
// releasing it cannot hang the server's Close.
func hold(r *http.Request, release <-chan struct{}) {
	holdCtx(r.Context(), release)
}

// holdCtx is hold for a context of the caller's.
func holdCtx(ctx context.Context, release <-chan struct{}) {
	tm := time.NewTimer(waitCeiling)
	defer tm.Stop()
	select {
	case <-release:
	case <-ctx.Done():
	case <-tm.C:
	}
}

// roundTripWithin is tr.RoundTrip(req) bounded by waitCeiling, reading
// the body: a pacing defect that blocks a request fails the test instead
// of hanging the package.
func roundTripWithin(t *testing.T, tr http.RoundTripper, req *http.Request) (string, error) {
	t.Helper()
	return roundTripCeiling(t, tr, req, waitCeiling)
}

// bubbleRoundTrip is roundTripWithin in a synctest bubble, bounded by
// bubbleCeiling.
func bubbleRoundTrip(t *testing.T, tr http.RoundTripper, req *http.Request) (string, error) {
	t.Helper()
	return roundTripCeiling(t, tr, req, bubbleCeiling)
}

// bubbleGet is getWithin in a synctest bubble, bounded by bubbleCeiling.
func bubbleGet(t *testing.T, tr http.RoundTripper, url string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return bubbleRoundTrip(t, tr, req)
}

// roundTripCeiling is tr.RoundTrip(req) bounded by ceiling, reading the
// body.
func roundTripCeiling(t *testing.T, tr http.RoundTripper, req *http.Request, ceiling time.Duration) (string, error) {
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
	r := recvWithin(t, done, ceiling, "the answer to "+req.Method+" "+req.URL.String())
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

// failingRobots serves body as robots.txt with Cache-Control: max-age
// maxAge seconds, or a 503 while failing is set.
func failingRobots(failing *atomic.Bool, maxAge int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Cache-Control", "max-age="+strconv.Itoa(maxAge))
		io.WriteString(w, body)
	}
}
