package frontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// handlerBase is a base RoundTripper that serves every origin with one
// handler in memory, so that a crawl runs in a synctest bubble. It
// records how many requests each origin has in flight at once.
type handlerBase struct {
	h http.Handler

	mu       sync.Mutex
	inFlight map[string]int
	most     int
	served   map[string]int // page requests by URL
}

func newBase(h http.Handler) *handlerBase {
	return &handlerBase{h: h, inFlight: map[string]int{}, served: map[string]int{}}
}

func (b *handlerBase) RoundTrip(req *http.Request) (*http.Response, error) {
	page := req.URL.Path != "/robots.txt"
	if page {
		b.mu.Lock()
		b.inFlight[req.URL.Host]++
		b.most = max(b.most, b.inFlight[req.URL.Host])
		b.served[req.URL.String()]++
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.inFlight[req.URL.Host]--
			b.mu.Unlock()
		}()
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// crawl runs workers that take URLs from f, send them through tr and
// give them back, until f is empty; each request takes page.
func crawl(t *testing.T, f *Frontier, tr http.RoundTripper, workers int, page time.Duration) {
	t.Helper()
	ctx := t.Context()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Next(ctx)
				if errors.Is(err, ErrEmpty) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				req, _ := http.NewRequestWithContext(l.Context(ctx), http.MethodGet, l.URL, nil)
				resp, err := tr.RoundTrip(req)
				if err == nil {
					time.Sleep(page)
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				f.Done(ctx, l, resp, err)
			}
		})
	}
	wg.Wait()
}

// TestTransitions gives Done each kind of outcome and checks the state it
// leads to, when a Waiting URL is due, and that it becomes Queued then.
func TestTransitions(t *testing.T) {
	const minBackoff, maxBackoff = 10 * time.Second, 30 * time.Second
	status := func(code int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: code, Header: h, Body: http.NoBody}
	}
	tests := []struct {
		name     string
		resp     *http.Response
		err      func(now time.Time) error
		attempts int // of the URL before this outcome, this one included
		want     State
		due      time.Duration // Waiting: when, from now
		counted  bool          // the attempt counts
	}{
		{"a page is done", status(200, ""), nil, 1, Done, 0, true},
		{"a 404 is done", status(404, ""), nil, 1, Done, 0, true},
		{"a rule refuses for good", nil, fixed(&robots.DisallowedError{Rule: &policy.Rule{Pattern: "/"}}), 1, Refused, 0, true},
		{"a preference refuses for good", nil, fixed(&robots.DisallowedError{Label: "train-ai"}), 1, Refused, 0, true},
		{"an unreachable robots.txt waits for its retry", nil, func(now time.Time) error {
			return &robots.DisallowedError{Unreachable: true, RetryAt: now.Add(time.Hour)}
		}, 1, Waiting, time.Hour, true},
		{"an unreachable robots.txt with no attempt left fails", nil, func(now time.Time) error {
			return &robots.DisallowedError{Unreachable: true, RetryAt: now.Add(time.Hour)}
		}, 4, Failed, 0, true},
		{"a taken slot waits for it, no attempt", nil, func(now time.Time) error { return &robots.SlotError{At: now.Add(3 * time.Second)} }, 3, Waiting, 3 * time.Second, false},
		{"a slot taken from http.Client's first request is no attempt", nil, func(now time.Time) error {
			return &url.Error{Op: "Get", URL: "http://site.example/a", Err: &robots.SlotError{At: now.Add(3 * time.Second)}}
		}, 3, Waiting, 3 * time.Second, false},
		{"a slot taken from a redirect hop is an attempt: the URL was sent", nil, func(now time.Time) error {
			return &url.Error{Op: "Get", URL: "http://site.example/a/", Err: &robots.SlotError{At: now.Add(3 * time.Second)}}
		}, 1, Waiting, 3 * time.Second, true},
		{"a 429 with Retry-After waits for the origin", status(429, "5"), nil, 1, Waiting, 0, true},
		{"a 503 without Retry-After backs off", status(503, ""), nil, 1, Waiting, minBackoff, true},
		{"a 503 with Retry-After 0 backs off", status(503, "0"), nil, 1, Waiting, minBackoff, true},
		{"a 503 with an unreadable Retry-After backs off", status(503, "soon"), nil, 1, Waiting, minBackoff, true},
		{"a 503 with a Retry-After date past backs off", status(503, "Fri, 01 Jan 1999 00:00:00 GMT"), nil, 1, Waiting, minBackoff, true},
		{"a 500 with Retry-After backs off: no pause keeps it", status(500, "1"), nil, 1, Waiting, minBackoff, true},
		{"a second 500 backs off twice as long", status(500, ""), nil, 2, Waiting, 2 * minBackoff, true},
		{"a third 500 backs off MaxBackoff, not four times as long", status(500, ""), nil, 3, Waiting, maxBackoff, true},
		{"a 500 with no attempt left fails", status(500, ""), nil, 4, Failed, 0, true},
		{"a network error backs off", nil, fixed(errors.New("connection reset")), 1, Waiting, minBackoff, true},
		{"a request cancelled on its own is a failed try", nil, fixed(fmt.Errorf("get: %w", context.Canceled)), 1, Waiting, minBackoff, true},
		{"neither a response nor an error is a failed try", nil, nil, 1, Waiting, minBackoff, true},
		{"a stopping worker puts the URL back untried", nil, fixed(context.Canceled), 3, Waiting, 0, false},
		{"a worker stopped by its deadline puts the URL back untried", nil, fixed(context.DeadlineExceeded), 3, Waiting, 0, false},
		{"a request past its own deadline is a failed try", nil, fixed(fmt.Errorf("get: %w", context.DeadlineExceeded)), 1, Waiting, minBackoff, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
				f := New(tr, Options{MaxAttempts: 4, MinBackoff: minBackoff, MaxBackoff: maxBackoff})
				const u = "http://site.example/a"
				if ok, err := f.Add(u); !ok || err != nil {
					t.Fatal(ok, err)
				}
				ctx := t.Context()
				var l *Lease
				for range tt.attempts {
					var err error
					if l, err = f.Next(ctx); err != nil {
						t.Fatal(err)
					}
					if l.Attempt < tt.attempts {
						// Earlier attempts end in a backed-off 500.
						f.Done(ctx, l, status(500, ""), nil)
						time.Sleep(time.Hour)
					}
				}
				now := time.Now()
				var err error
				if tt.err != nil {
					err = tt.err(now)
				}
				doneCtx := ctx
				if errors.Is(err, context.Canceled) && !tt.counted {
					c, cancel := context.WithCancel(ctx)
					cancel()
					doneCtx = c
				}
				if err == context.DeadlineExceeded {
					c, cancel := context.WithDeadline(ctx, now)
					defer cancel()
					doneCtx = c
				}
				if got := f.Done(doneCtx, l, tt.resp, err); got != tt.want {
					t.Fatalf("Done = %v, want %v", got, tt.want)
				}
				got, ok := f.Lookup(u)
				if !ok || got.State != tt.want {
					t.Fatalf("Lookup = %+v, %v; want state %v", got, ok, tt.want)
				}
				wantAttempts := tt.attempts
				if !tt.counted {
					wantAttempts--
				}
				if got.Attempts != wantAttempts {
					t.Errorf("Attempts = %d, want %d", got.Attempts, wantAttempts)
				}
				if tt.want == Refused && got.Err != err {
					t.Errorf("Err = %v, want the refusal", got.Err)
				}
				if tt.want != Waiting {
					if _, err := f.Next(ctx); !errors.Is(err, ErrEmpty) {
						t.Errorf("Next after a final state = %v, want ErrEmpty", err)
					}
					return
				}
				if due := got.At.Sub(now); due != tt.due && !(tt.due == 0 && due <= 0) {
					t.Errorf("due in %v, want %v", due, tt.due)
				}
				// Due, it is handed out again, and not before.
				l2, err := f.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if waited := time.Since(now); waited < tt.due {
					t.Errorf("handed out again after %v, want %v", waited, tt.due)
				}
				if l2.URL != u || l2.Attempt != wantAttempts+1 {
					t.Errorf("lease %+v, want %s attempt %d", l2, u, wantAttempts+1)
				}
				if f.Done(ctx, l, status(200, ""), nil) != InFlight {
					t.Error("a lease given back twice changed the URL")
				}
			})
		})
	}
}

// TestRetryAfterKeptByTheURL: a URL answered 503 with a Retry-After the
// transport keeps waits for the pause, of its own origin or, redirected,
// of the origin that answered, and Save keeps when it ends, so that a
// crawl resumed on a transport that never saw the 503 does not send it
// early.
func TestRetryAfterKeptByTheURL(t *testing.T) {
	for _, redirect := range []bool{false, true} {
		t.Run(fmt.Sprintf("redirect=%v", redirect), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				busy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch {
					case r.URL.Path == "/robots.txt":
					case redirect && r.Host == "site.example":
						http.Redirect(w, r, "http://other.example/b", http.StatusFound)
					default:
						w.Header().Set("Retry-After", "3")
						w.WriteHeader(http.StatusServiceUnavailable)
					}
				})
				opts := robots.Options{UserAgent: "TestBot", MinDelay: -1}
				tr := robots.NewTransport(newBase(busy), opts)
				f := New(tr, Options{MinBackoff: time.Second})
				const u = "http://site.example/a"
				f.Add(u)
				ctx := t.Context()
				l, err := f.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequestWithContext(l.Context(ctx), http.MethodGet, u, nil)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				answered := time.Now()
				if st := f.Done(ctx, l, resp, nil); st != Waiting {
					t.Fatalf("Done = %v, want Waiting", st)
				}
				if got, _ := f.Lookup(u); got.At.Sub(answered) != 3*time.Second {
					t.Errorf("At is %v after the 503; want the Retry-After's 3s", got.At.Sub(answered))
				}
				var saved strings.Builder
				if err := f.Save(&saved); err != nil {
					t.Fatal(err)
				}
				g := New(robots.NewTransport(newBase(busy), opts), Options{MinBackoff: time.Second})
				if err := g.Load(strings.NewReader(saved.String())); err != nil {
					t.Fatal(err)
				}
				if _, err := g.Next(ctx); err != nil {
					t.Fatal(err)
				}
				if waited := time.Since(answered); waited < 3*time.Second {
					t.Errorf("resumed, the URL was handed out %v after the 503; want the Retry-After's 3s", waited)
				}
			})
		})
	}
}

// TestAddToADrainedOrigin: a URL added to an origin whose last URL was
// just given back is handed out when NextFree says the origin is free,
// not at once.
func TestAddToADrainedOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 300 * time.Millisecond
		tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: delay})
		f := New(tr, Options{})
		ctx := t.Context()
		f.Add("http://site.example/a")
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(l.Context(ctx), http.MethodGet, l.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sent := time.Now()
		f.Done(ctx, l, resp, nil)
		f.Add("http://site.example/b")
		if _, err := f.Next(ctx); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(sent); waited < delay {
			t.Errorf("the added URL was handed out %v after the last send; want NextFree's %v", waited, delay)
		}
	})
}

// fixed returns an outcome's error that does not depend on the time.
func fixed(err error) func(time.Time) error { return func(time.Time) error { return err } }

// TestDeduplicate checks that a URL is held once in every spelling the
// transport sends as the same request, and that other URLs are not.
func TestDeduplicate(t *testing.T) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot"})
	f := New(tr, Options{})
	same := []string{
		"http://site.example/a/b?x=1",
		"HTTP://SITE.example:80/a/b?x=1",
		"http://site.example/a/b?x=1#part",
		"http://site.example/a/%62?x=1",
		"http://site.example:80/%61/b?x=1",
	}
	for i, u := range same {
		ok, err := f.Add(u)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (i == 0) {
			t.Errorf("Add(%q) = %v, want %v", u, ok, i == 0)
		}
	}
	for _, u := range []string{"http://site.example/A/b?x=1", "https://site.example/a/b?x=1", "http://site.example:8080/a/b?x=1", "http://site.example/a/b?x=2", "http://site.example/a/b%2Fc"} {
		if ok, err := f.Add(u); !ok || err != nil {
			t.Errorf("Add(%q) = %v, %v; want a new URL", u, ok, err)
		}
	}
	for _, bad := range []string{"ftp://site.example/a", "/relative", "http://%zz/"} {
		if _, err := f.Add(bad); err == nil {
			t.Errorf("Add(%q) took it", bad)
		}
	}
	if st := f.Stats(); st.Queued != 6 {
		t.Errorf("%d queued, want 6", st.Queued)
	}
}

// TestBound checks that a full frontier refuses a URL with ErrFull, by
// count and by bytes, and that a duplicate is not refused for it.
func TestBound(t *testing.T) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot"})
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"by count", Options{MaxURLs: 2}},
		{"by bytes", Options{MaxBytes: int64(2 * len("http://site.example/1"))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := New(tr, tt.opts)
			for i := range 2 {
				if ok, err := f.Add(fmt.Sprintf("http://site.example/%d", i)); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			if _, err := f.Add("http://site.example/2"); !errors.Is(err, ErrFull) {
				t.Errorf("third URL: %v, want ErrFull", err)
			}
			if ok, err := f.Add("http://site.example/1"); ok || err != nil {
				t.Errorf("a duplicate in a full frontier: %v, %v; want not added, no error", ok, err)
			}
		})
	}
}

// TestCrawlLosesNothing crawls origins whose robots.txt answers 503
// first, whose pages answer 429 with Retry-After, 503, 500 and refuse
// by rule, with a retry budget: every URL ends done, refused or failed
// with its reason, no origin ever has two requests in flight, and pages
// fetched once stay fetched once.
func TestCrawlLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var robotsTries atomic.Int32
		var mu sync.Mutex
		tries := map[string]int{}
		base := newBase(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				if r.Host == "down.example" && robotsTries.Add(1) == 1 {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				io.WriteString(w, "User-agent: *\nDisallow: /private\n")
				return
			}
			mu.Lock()
			tries[r.URL.String()]++
			n := tries[r.URL.String()]
			mu.Unlock()
			switch {
			case strings.HasSuffix(r.URL.Path, "/busy") && n == 1:
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
			case strings.HasSuffix(r.URL.Path, "/flaky") && n <= 2:
				w.WriteHeader(http.StatusServiceUnavailable)
			case strings.HasSuffix(r.URL.Path, "/broken"):
				w.WriteHeader(http.StatusInternalServerError)
			default:
				io.WriteString(w, "page")
			}
		}))
		tr := robots.NewTransport(base, robots.Options{UserAgent: "TestBot", MinDelay: 100 * time.Millisecond})
		f := New(tr, Options{MaxAttempts: 3, MinBackoff: time.Second})
		want := map[string]State{}
		for _, host := range []string{"a.example", "b.example", "down.example"} {
			for i := range 5 {
				want[fmt.Sprintf("http://%s/p%d", host, i)] = Done
			}
			want["http://"+host+"/busy"] = Done
			want["http://"+host+"/flaky"] = Done
			want["http://"+host+"/broken"] = Failed
			want["http://"+host+"/private/x"] = Refused
		}
		for u := range want {
			if _, err := f.Add(u); err != nil {
				t.Fatal(err)
			}
		}
		crawl(t, f, tr, 4, 20*time.Millisecond)
		for u, st := range want {
			got, ok := f.Lookup(u)
			if !ok || got.State != st {
				t.Errorf("%s: %+v, want %v", u, got, st)
				continue
			}
			switch st {
			case Failed:
				if got.Status != 500 || got.Attempts != 3 {
					t.Errorf("%s failed with status %d after %d attempts, want 500 after 3", u, got.Status, got.Attempts)
				}
			case Refused:
				var d *robots.DisallowedError
				if !errors.As(got.Err, &d) || d.Rule == nil {
					t.Errorf("%s refused with %v, want the rule's DisallowedError", u, got.Err)
				}
			}
		}
		if base.most > 1 {
			t.Errorf("an origin had %d requests in flight at once", base.most)
		}
		for u, n := range base.served {
			if strings.HasSuffix(u, "/p0") && n != 1 {
				t.Errorf("%s fetched %d times", u, n)
			}
		}
		st := f.Stats()
		if st.Done != 21 || st.Refused != 3 || st.Failed != 3 || st.Queued+st.InFlight+st.Waiting != 0 {
			t.Errorf("stats %+v", st)
		}
		if st.RefusedByRule != 3 || st.Retries == 0 {
			t.Errorf("stats %+v: want 3 refusals by rule and retries", st)
		}
	})
}

// countingTransport counts NextFree calls.
type countingTransport struct {
	transport
	calls atomic.Int64
}

func (c *countingTransport) NextFree(ctx context.Context, rawURL string) (time.Time, error) {
	c.calls.Add(1)
	return c.transport.NextFree(ctx, rawURL)
}

// TestNoSpinWhilePaused pauses every origin with a long Retry-After and
// checks that the workers wait without asking the transport anything
// until the pause ends, then finish the crawl.
func TestNoSpinWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var paused sync.Map
		base := newBase(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				return
			}
			if _, again := paused.LoadOrStore(r.Host, true); !again {
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}))
		tr := robots.NewTransport(base, robots.Options{UserAgent: "TestBot", MinDelay: -1})
		f := New(tr, Options{})
		ct := &countingTransport{transport: f.tr}
		f.tr = ct
		for _, host := range []string{"a.example", "b.example", "c.example"} {
			for i := range 3 {
				f.Add(fmt.Sprintf("http://%s/%d", host, i))
			}
		}
		done := make(chan struct{})
		go func() {
			crawl(t, f, tr, 8, 0)
			close(done)
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		before := ct.calls.Load()
		if st := f.Stats(); st.Responses["4xx"] != 3 {
			t.Fatalf("stats %+v, want the three 429s", st)
		}
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if n := ct.calls.Load() - before; n != 0 {
			t.Errorf("%d NextFree calls while every origin was paused", n)
		}
		<-done
		if st := f.Stats(); st.Done != 9 {
			t.Errorf("stats %+v, want 9 done", st)
		}
	})
}

// TestSaveLoadMidCrawl stops a crawl halfway, saves the frontier, loads
// it into a new one and finishes: every page is fetched once, the retry
// state carries over, and a torn or foreign file is refused whole.
func TestSaveLoadMidCrawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := newBase(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/busy") {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		tr := robots.NewTransport(base, robots.Options{UserAgent: "TestBot", MinDelay: 10 * time.Millisecond})
		f := New(tr, Options{MinBackoff: time.Minute, MaxAttempts: 2})
		var urls []string
		for _, host := range []string{"a.example", "b.example"} {
			// The busy page first, so that it waits for its retry at the save.
			urls = append(urls, "http://"+host+"/busy")
			for i := range 10 {
				urls = append(urls, fmt.Sprintf("http://%s/%d", host, i))
			}
		}
		for _, u := range urls {
			f.Add(u)
		}
		// Half the URLs, then stop: no request is in flight at the save.
		ctx := t.Context()
		for range len(urls) / 2 {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, l.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			f.Done(ctx, l, resp, err)
		}
		var saved strings.Builder
		if err := f.Save(&saved); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{saved.String()[:saved.Len()/2], `{"format":"other","version":1,"urls":[],"count":0}`, ""} {
			g := New(tr, Options{})
			if err := g.Load(strings.NewReader(bad)); err == nil {
				t.Errorf("Load took %.40q", bad)
			} else if st := g.Stats(); st.Queued+st.Done+st.Waiting != 0 {
				t.Errorf("a refused file left %+v", st)
			}
		}
		g := New(tr, Options{MinBackoff: time.Minute, MaxAttempts: 2})
		if err := g.Load(strings.NewReader(saved.String())); err != nil {
			t.Fatal(err)
		}
		before, after := f.Stats(), g.Stats()
		if before.Done != after.Done || before.Waiting != after.Waiting || before.Queued != after.Queued || before.Waiting == 0 {
			t.Errorf("loaded %+v, saved %+v; want the same, a URL waiting", after, before)
		}
		for _, u := range urls {
			was, _ := f.Lookup(u)
			got, _ := g.Lookup(u)
			if got.State != was.State || got.Attempts != was.Attempts || !got.At.Equal(was.At) || got.Status != was.Status {
				t.Errorf("%s loaded as %+v, saved as %+v", u, got, was)
			}
		}
		if err := g.Load(strings.NewReader(saved.String())); err == nil {
			t.Error("Load into a frontier holding URLs took it")
		}
		crawl(t, g, tr, 3, 0)
		for _, u := range urls {
			got, _ := g.Lookup(u)
			switch {
			case strings.HasSuffix(u, "/busy"):
				if got.State != Failed || got.Attempts != 2 {
					t.Errorf("%s: %+v, want failed after 2 attempts", u, got)
				}
			case got.State != Done:
				t.Errorf("%s: %+v, want done", u, got)
			case base.served[u] != 1:
				t.Errorf("%s fetched %d times", u, base.served[u])
			}
		}
	})
}

// TestAddToAHeldOrigin checks that a URL added to an origin a worker
// holds goes to no other worker until the first gives its URL back.
func TestAddToAHeldOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
		f := New(tr, Options{})
		ctx := t.Context()
		f.Add("http://a.example/1")
		held, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *Lease, 1)
		go func() {
			l, err := f.Next(ctx)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		synctest.Wait()
		f.Add("http://a.example/2")
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case l := <-got:
			t.Fatalf("%s handed out while another worker holds its origin", l.URL)
		default:
		}
		f.Done(ctx, held, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
		synctest.Wait()
		select {
		case l := <-got:
			if l.URL != "http://a.example/2" {
				t.Errorf("the waiting worker got %s", l.URL)
			}
		default:
			t.Fatal("the URL added was not handed out once its origin was given back")
		}
	})
}

// TestPriority checks that within an origin a higher priority goes first,
// then the order of adding.
func TestPriority(t *testing.T) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
	f := New(tr, Options{})
	f.Add("http://site.example/1")
	f.AddPriority("http://site.example/2", 5)
	f.Add("http://site.example/3")
	f.AddPriority("http://site.example/4", 5)
	var got []string
	for range 4 {
		l, err := f.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(l.URL, "http://site.example/"))
		f.Done(t.Context(), l, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
	}
	if strings.Join(got, ",") != "2,4,1,3" {
		t.Errorf("order %v, want 2,4,1,3", got)
	}
}

// TestProgressLog checks that a Logger gets a progress line at most every
// LogEvery, with the counts of the moment.
func TestProgressLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf strings.Builder
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
		tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
		f := New(tr, Options{Logger: logger, LogEvery: 10 * time.Second})
		for i := range 3 {
			f.Add(fmt.Sprintf("http://site.example/%d", i))
		}
		for i := range 3 {
			l, err := f.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			f.Done(t.Context(), l, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
			if i == 1 {
				time.Sleep(10 * time.Second)
			}
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines, want 2 (the first Done, then 10 s later):\n%s", len(lines), buf.String())
		}
		for i, want := range []string{"queued=2 in_flight=0 waiting=0 done=1", "queued=0 in_flight=0 waiting=0 done=3"} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("line %d: %s, want %q", i+1, lines[i], want)
			}
		}
	})
}

// TestSaveInFlightAndEach saves a frontier with a URL in flight, which is
// saved queued with that attempt not counted, and walks the loaded
// frontier with Each, stopping when asked.
func TestSaveInFlightAndEach(t *testing.T) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
	f := New(tr, Options{})
	for i := range 3 {
		f.AddPriority(fmt.Sprintf("http://site.example/%d", i), 3-i)
	}
	l, err := f.Next(t.Context())
	if err != nil || l.URL != "http://site.example/0" || l.Attempt != 1 {
		t.Fatalf("Next = %+v, %v", l, err)
	}
	var saved strings.Builder
	if err := f.Save(&saved); err != nil {
		t.Fatal(err)
	}
	g := New(tr, Options{})
	if err := g.Load(strings.NewReader(saved.String())); err != nil {
		t.Fatal(err)
	}
	got, _ := g.Lookup(l.URL)
	if got.State != Queued || got.Attempts != 0 {
		t.Errorf("the URL in flight loaded as %+v, want queued with no attempt", got)
	}
	if l2, err := g.Next(t.Context()); err != nil || l2.URL != l.URL || l2.Attempt != 1 {
		t.Errorf("first of the loaded frontier: %+v, %v; want %s, attempt 1 (priorities kept)", l2, err, l.URL)
	}
	seen := map[string]State{}
	g.Each(func(u URL) bool { seen[u.URL] = u.State; return true })
	if len(seen) != 3 || seen[l.URL] != InFlight {
		t.Errorf("Each saw %v", seen)
	}
	n := 0
	g.Each(func(URL) bool { n++; return false })
	if n != 1 {
		t.Errorf("Each went on %d times after false", n)
	}
}

// TestLoadRefuses checks that Load refuses, whole, a file whose URL count
// disagrees with its list, one holding a URL in flight, a state it does
// not know and a URL twice, and that a loaded frontier hands out an
// origin's URLs of one priority in the order they were added.
func TestLoadRefuses(t *testing.T) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
	const u1, u2 = `{"url":"http://site.example/1","state":"queued"}`, `{"url":"http://site.example/2","state":"queued"}`
	for name, file := range map[string]string{
		"a count that disagrees": `{"format":"crawlkit-frontier","version":1,"urls":[` + u1 + `],"count":2}`,
		"a URL in flight":        `{"format":"crawlkit-frontier","version":1,"urls":[{"url":"http://site.example/1","state":"in flight"}],"count":1}`,
		"an unknown state":       `{"format":"crawlkit-frontier","version":1,"urls":[{"url":"http://site.example/1","state":"lost"}],"count":1}`,
		"a URL twice":            `{"format":"crawlkit-frontier","version":1,"urls":[` + u1 + `,` + u2 + `,` + u1 + `],"count":3}`,
		"a later version":        `{"format":"crawlkit-frontier","version":2,"urls":[],"count":0}`,
		"something after it":     `{"format":"crawlkit-frontier","version":1,"urls":[` + u1 + `],"count":1}garbage`,
		"a file saved twice":     `{"format":"crawlkit-frontier","version":1,"urls":[` + u1 + `],"count":1}` + "\n" + `{"format":"crawlkit-frontier","version":1,"urls":[` + u2 + `],"count":1}`,
	} {
		f := New(tr, Options{})
		if err := f.Load(strings.NewReader(file)); err == nil {
			t.Errorf("%s: loaded", name)
		} else if st := f.Stats(); st.Queued != 0 {
			t.Errorf("%s: %v, and %d URLs queued", name, err, st.Queued)
		}
	}

	f := New(tr, Options{})
	for i := range 4 {
		f.Add(fmt.Sprintf("http://site.example/%d", i))
	}
	var saved strings.Builder
	if err := f.Save(&saved); err != nil {
		t.Fatal(err)
	}
	g := New(tr, Options{})
	if err := g.Load(strings.NewReader(saved.String())); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		l, err := g.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("http://site.example/%d", i); l.URL != want {
			t.Errorf("loaded frontier's URL %d: %s, want %s", i, l.URL, want)
		}
		g.Done(t.Context(), l, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
	}
}

// TestManyWorkersKeepTheInvariants crawls 20 origins with 32 workers
// whose pages answer, by a fixed pseudo-random draw per try, 200, 404,
// 429 with Retry-After, 503 or 500, some paths refused: whatever the
// interleaving, every URL ends in a final state that matches what its
// last answer was, no origin ever has two requests in flight, and the
// counts add up.
func TestManyWorkersKeepTheInvariants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		tries := map[string]int{}
		last := map[string]int{}
		base := newBase(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nDisallow: /*7\n")
				return
			}
			u := r.URL.String()
			mu.Lock()
			tries[u]++
			n := tries[u]
			mu.Unlock()
			h := uint32(2166136261)
			for _, c := range []byte(fmt.Sprintf("%s#%d", u, n)) {
				h = (h ^ uint32(c)) * 16777619
			}
			code := []int{200, 200, 200, 404, 429, 503, 500}[h%7]
			if code == 429 {
				w.Header().Set("Retry-After", "1")
			}
			mu.Lock()
			last[u] = code
			mu.Unlock()
			w.WriteHeader(code)
		}))
		tr := robots.NewTransport(base, robots.Options{UserAgent: "TestBot", MinDelay: 50 * time.Millisecond})
		f := New(tr, Options{MaxAttempts: 3, MinBackoff: time.Second})
		var all []string
		for o := range 20 {
			for p := range 10 {
				u := fmt.Sprintf("http://site%d.example/p%d", o, p)
				all = append(all, u)
				f.Add(u)
			}
		}
		crawl(t, f, tr, 32, 5*time.Millisecond)
		if base.most > 1 {
			t.Errorf("an origin had %d requests in flight at once", base.most)
		}
		counts := map[State]int{}
		for _, u := range all {
			got, ok := f.Lookup(u)
			if !ok || !got.State.Final() {
				t.Errorf("%s: %+v, want a final state", u, got)
				continue
			}
			counts[got.State]++
			code := last[u]
			switch {
			case strings.HasSuffix(u, "7"):
				if got.State != Refused || tries[u] != 0 {
					t.Errorf("%s: %v after %d tries, want refused unsent", u, got.State, tries[u])
				}
			case code == 200 || code == 404:
				if got.State != Done || got.Status != code {
					t.Errorf("%s: %+v, last answered %d", u, got, code)
				}
			default:
				if got.State != Failed || got.Status != code || got.Attempts != 3 || tries[u] != 3 {
					t.Errorf("%s: %+v after %d tries, last answered %d; want failed after 3", u, got, tries[u], code)
				}
			}
		}
		st := f.Stats()
		if st.Done != counts[Done] || st.Refused != counts[Refused] || st.Failed != counts[Failed] || st.Done+st.Refused+st.Failed != len(all) {
			t.Errorf("stats %+v, counted %v", st, counts)
		}
		var outcomes int64
		for _, n := range st.Responses {
			outcomes += n
		}
		served := 0
		for _, n := range tries {
			served += n
		}
		if outcomes != int64(served+st.Refused) {
			t.Errorf("%d outcomes counted, %d pages served and %d refusals", outcomes, served, st.Refused)
		}
	})
}

// TestAddWakesAWaitingWorker checks that a worker waiting in Next while
// the only URL is in flight gets a URL added meanwhile at once, and that
// one waiting with nothing left to hand out learns ErrEmpty when the
// last lease is given back.
func TestAddWakesAWaitingWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot", MinDelay: -1})
		f := New(tr, Options{})
		f.Add("http://a.example/1")
		held, err := f.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *Lease, 1)
		go func() {
			l, err := f.Next(t.Context())
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		synctest.Wait()
		f.Add("http://b.example/1")
		synctest.Wait()
		select {
		case l := <-got:
			if l.URL != "http://b.example/1" {
				t.Errorf("the waiting worker got %s", l.URL)
			}
			f.Done(t.Context(), l, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
		default:
			t.Fatal("the waiting worker was not woken by the URL added")
		}
		empty := make(chan error, 1)
		go func() {
			_, err := f.Next(t.Context())
			empty <- err
		}()
		synctest.Wait()
		f.Done(t.Context(), held, &http.Response{StatusCode: 200, Body: http.NoBody}, nil)
		synctest.Wait()
		select {
		case err := <-empty:
			if !errors.Is(err, ErrEmpty) {
				t.Errorf("Next = %v, want ErrEmpty", err)
			}
		default:
			t.Fatal("the waiting worker was not told the frontier is empty")
		}
	})
}

// FuzzLoad feeds Load any bytes as a saved frontier. It never panics; a
// file it refuses leaves the frontier empty, and one it takes saves back
// to a file that loads into a new frontier and saves again the same.
func FuzzLoad(f *testing.F) {
	tr := robots.NewTransport(newBase(http.NotFoundHandler()), robots.Options{UserAgent: "TestBot"})
	seed := New(tr, Options{})
	seed.Add("http://a.example/1")
	seed.Add("http://b.example/2")
	var saved strings.Builder
	if err := seed.Save(&saved); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(saved.String()))
	f.Add([]byte(`{"format":"crawlkit-frontier","version":1,"count":1,"urls":[{"url":"http://a.example/","state":"Waiting","at":"2026-12-06T00:00:00Z","attempts":-3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := New(tr, Options{MaxURLs: 64, MaxBytes: 1 << 16})
		if err := fr.Load(strings.NewReader(string(data))); err != nil {
			if s := fr.Stats(); s.Queued+s.InFlight+s.Waiting+s.Done+s.Refused+s.Failed != 0 {
				t.Fatalf("a refused file left URLs: %+v", s)
			}
			return
		}
		var once, twice strings.Builder
		if err := fr.Save(&once); err != nil {
			t.Fatal(err)
		}
		again := New(tr, Options{MaxURLs: 64, MaxBytes: 1 << 16})
		if err := again.Load(strings.NewReader(once.String())); err != nil {
			t.Fatalf("%q loaded, saved as %q, which does not load: %v", data, once.String(), err)
		}
		if err := again.Save(&twice); err != nil {
			t.Fatal(err)
		}
		if once.String() != twice.String() {
			t.Fatalf("%q saves as %q, then as %q", data, once.String(), twice.String())
		}
	})
}

// TestRedirectedNamesTheHop: http.Client names the failing request's URL,
// a password masked as it masks one; only another URL is a redirect hop.
func TestRedirectedNamesTheHop(t *testing.T) {
	slot := &robots.SlotError{}
	for _, tt := range []struct {
		lease, failed string
		want          bool
	}{
		{"http://site.example/a", "http://site.example/a", false},
		{"http://user:secret@site.example/a", "http://user:***@site.example/a", false},
		{"http://site.example/a?q=1", "http://site.example/a?q=1", false},
		{"http://site.example/dir", "http://site.example/dir/", true},
		{"http://site.example/go", "http://other.example/x", true},
	} {
		err := &url.Error{Op: "Get", URL: tt.failed, Err: slot}
		if got := redirected(err, tt.lease); got != tt.want {
			t.Errorf("redirected(%s failing, lease %s) = %v, want %v", tt.failed, tt.lease, got, tt.want)
		}
	}
	if redirected(slot, "http://site.example/a") {
		t.Error("a SlotError from RoundTrip itself is no redirect hop")
	}
}
