package robots

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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

func (s *site) setRobots(h http.HandlerFunc) {
	s.mu.Lock()
	s.robots = h
	s.mu.Unlock()
}

func (s *site) setPages(h http.HandlerFunc) {
	s.mu.Lock()
	s.pages = h
	s.mu.Unlock()
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

// waitFor polls cond until it holds, failing the test with what it was
// waiting for once waitCeiling has passed.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitCeiling)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting, after %v, for %s", waitCeiling, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv receives from ch, failing the test with what it was waiting for
// once waitCeiling has passed.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	tm := time.NewTimer(waitCeiling)
	defer tm.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.C:
		t.Fatalf("still waiting, after %v, for %s", waitCeiling, what)
	}
	var zero T
	return zero
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
