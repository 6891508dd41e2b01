package robots

import (
	"bytes"
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

// TestZeroTransport checks that the zero Transport works like
// NewTransport(nil, Options{}) instead of panicking.
func TestZeroTransport(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	var tr Transport
	defer tr.CloseIdleConnections()
	if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("Check /private: %v, want refused", err)
	}
	if _, err := get(t, &tr, s.URL+"/public"); err != nil {
		t.Errorf("GET /public: %v", err)
	}
	if st := tr.Stats(); st.Fetches[Parsed] != 1 || st.Sent != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

// TestCheckRejectsRelative checks that a URL naming no origin is an
// error, not an allowed request.
func TestCheckRejectsRelative(t *testing.T) {
	tr := newTestTransport(t, newClock(), Options{})
	for _, raw := range []string{"/relative", "not a url", "//host.example/x", "http:///nohost", "", "%zz"} {
		err := tr.Check(context.Background(), raw)
		if !errors.Is(err, ErrNotHTTP) || errors.Is(err, ErrDisallowed) || !strings.HasPrefix(err.Error(), "robots: ") {
			t.Errorf("Check(%q) = %v, want a robots: error matching ErrNotHTTP, not a refusal", raw, err)
		}
		if _, err := tr.Robots(context.Background(), raw); err == nil {
			t.Errorf("Robots(%q) accepted", raw)
		}
	}
}

// TestCheckAndRobotsAgreeOnOtherSchemes checks that Check and Robots
// answer alike for a URL that robots.txt does not govern: an error
// matching ErrNotHTTP, never a refusal and never a fetch, while RoundTrip
// passes such a request to the base unchecked.
func TestCheckAndRobotsAgreeOnOtherSchemes(t *testing.T) {
	base := &robotsLog{status: 200, body: "User-agent: *\nDisallow: /\n"}
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", Now: c.Now, Sleep: c.Sleep})
	for _, raw := range []string{"mailto:someone@site.example", "ftp://files.example/private", "FILE:///etc/passwd", "ws://site.example/chat"} {
		errCheck := tr.Check(context.Background(), raw)
		_, errRobots := tr.Robots(context.Background(), raw)
		for name, err := range map[string]error{"Check": errCheck, "Robots": errRobots} {
			if !errors.Is(err, ErrNotHTTP) || errors.Is(err, ErrDisallowed) {
				t.Errorf("%s(%q) = %v, want an error matching ErrNotHTTP and not ErrDisallowed", name, raw, err)
			}
		}
	}
	if got := base.fetched(); len(got) != 0 {
		t.Errorf("robots.txt fetched for URLs it does not govern: %q", got)
	}
}

// TestTrailingDotSameOrigin checks that "site.example." shares the
// robots.txt of "site.example".
func TestTrailingDotSameOrigin(t *testing.T) {
	base := &robotsLog{status: 200, body: privateRobots}
	c := newClock()
	tr := NewTransport(base, Options{MinDelay: -1, Now: c.Now, Sleep: c.Sleep})
	for _, u := range []string{"http://site.example/a", "http://site.example./b", "http://SITE.example.:80/c", "http://bücher.example./d", "http://xn--bcher-kva.example/e"} {
		if err := tr.Check(context.Background(), u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if want := "http://site.example/robots.txt http://xn--bcher-kva.example/robots.txt"; strings.Join(base.fetched(), " ") != want {
		t.Errorf("fetched %v, want %s", base.fetched(), want)
	}
	if tr.Stats().Origins != 2 {
		t.Errorf("%d origins held, want 2", tr.Stats().Origins)
	}
}

// panicCache is a Cache whose every method panics.
type panicCache struct{}

func (panicCache) Get(string) ([]byte, bool) { panic("cache Get broke") }
func (panicCache) Set(string, []byte)        { panic("cache Set broke") }
func (panicCache) Delete(string)             { panic("cache Delete broke") }

// panicHandler is a slog.Handler that panics on every record.
type panicHandler struct{}

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("logger broke") }
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h panicHandler) WithGroup(string) slog.Handler           { return h }

// TestPluginPanicsRecovered checks that a panic of the Cache, the Logger
// or the base RoundTripper during a robots.txt fetch is recovered: the
// base's makes the origin unreachable for that fetch, with the stack
// logged; the Cache's and the Logger's cost only what they would have
// done.
func TestPluginPanicsRecovered(t *testing.T) {
	t.Run("base", func(t *testing.T) {
		base := rtFunc(func(r *http.Request) (*http.Response, error) { panic("base broke") })
		var logs bytes.Buffer
		var mu sync.Mutex
		c := newClock()
		tr := NewTransport(base, Options{Now: c.Now, Sleep: c.Sleep, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		var de *DisallowedError
		if err := tr.Check(context.Background(), "http://site.example/x"); !errors.As(err, &de) || !de.Unreachable {
			t.Fatalf("Check: %v, want refused as unreachable", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(logs.String(), "base broke") || !strings.Contains(logs.String(), "goroutine") {
			t.Errorf("panic not logged with its stack:\n%s", logs.String())
		}
		if st := tr.Stats(); st.FetchStatus["network"] != 1 {
			t.Errorf("FetchStatus = %v, want one network failure", st.FetchStatus)
		}
	})
	t.Run("cache", func(t *testing.T) {
		s := newSite(t, serve(200, privateRobots))
		tr := newTestTransport(t, newClock(), Options{Cache: panicCache{}})
		if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("Check: %v, want refused by the fetched file", err)
		}
	})
	t.Run("logger", func(t *testing.T) {
		s := newSite(t, serve(200, privateRobots))
		tr := newTestTransport(t, newClock(), Options{Logger: slog.New(panicHandler{})})
		if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("Check: %v, want refused by the fetched file", err)
		}
	})
}

// TestFetchTimeoutBaseIgnoresContext checks that FetchTimeout bounds a
// robots.txt fetch whose base RoundTripper never returns.
func TestFetchTimeoutBaseIgnoresContext(t *testing.T) {
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		holdCtx(context.Background(), stuck) // ignores r.Context()
		return nil, errors.New("released")
	})
	c := newClock()
	tr := NewTransport(base, Options{Now: c.Now, Sleep: c.Sleep, FetchTimeout: 50 * time.Millisecond})
	start := time.Now()
	var de *DisallowedError
	err := tr.Check(context.Background(), "http://site.example/x")
	if !errors.As(err, &de) || !de.Unreachable || de.Err == nil || !strings.Contains(de.Err.Error(), "within 50ms") {
		t.Errorf("Check: %v, want refused as unreachable after the timeout", err)
	}
	// A generous ceiling: the bound is 50 ms.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Check took %v", d)
	}
}

// TestScrapyLikeUserAgent checks that without UserAgent or Agents each
// request is decided for the product token of its own User-Agent, and
// Check for the "*" groups.
func TestScrapyLikeUserAgent(t *testing.T) {
	s := newSite(t, serve(200, "User-agent: FooBot\nDisallow: /foo\n\nUser-agent: BarBot\nDisallow: /bar\n\nUser-agent: *\nDisallow: /all\n"))
	c := newClock()
	tr := NewTransport(nil, Options{MinDelay: -1, Now: c.Now, Sleep: c.Sleep})
	t.Cleanup(tr.CloseIdleConnections)
	for _, tc := range []struct {
		ua, path string
		allowed  bool
	}{
		{"FooBot/1.0 (+https://foo.example)", "/foo", false},
		{"FooBot/1.0", "/bar", true},
		{"FooBot/1.0", "/all", true},
		{"BarBot/2", "/bar", false},
		{"BarBot/2", "/foo", true},
		{"", "/all", false},
		{"OtherBot", "/all", false},
		{"OtherBot", "/foo", true},
	} {
		req, _ := http.NewRequest("GET", s.URL+tc.path, nil)
		if tc.ua != "" {
			req.Header.Set("User-Agent", tc.ua)
		}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != tc.allowed {
			t.Errorf("%q %s: %v, want allowed=%v", tc.ua, tc.path, err, tc.allowed)
		}
	}
	if err := tr.Check(context.Background(), s.URL+"/all"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("Check /all: %v, want refused by the * group", err)
	}
	if err := tr.Check(context.Background(), s.URL+"/foo"); err != nil {
		t.Errorf("Check /foo: %v, want allowed by the * group", err)
	}
}

// TestStatsCounts checks what Stats counts apart: requests sent, requests
// for /robots.txt itself, decisions of Check, and fetches by status class.
func TestStatsCounts(t *testing.T) {
	ok := newSite(t, serve(200, privateRobots))
	missing := newSite(t, serve(404, ""))
	down := newSite(t, serve(503, ""))
	var hits atomic.Int64
	redirects := redirectServer(t, http.StatusFound, 10, "", &hits)
	c := newClock()
	tr := newTestTransport(t, c, Options{})
	ctx := context.Background()
	get(t, tr, ok.URL+"/a")
	get(t, tr, ok.URL+"/private")
	get(t, tr, ok.URL+"/robots.txt")
	tr.Check(ctx, ok.URL+"/b")
	tr.Check(ctx, missing.URL+"/a")
	tr.Check(ctx, down.URL+"/a")
	tr.Check(ctx, redirects.URL+"/a")
	st := tr.Stats()
	if st.Sent != 2 || st.RobotsRequests != 1 || st.Allowed != 4 || st.Refused != 2 {
		t.Errorf("Sent %d RobotsRequests %d Allowed %d Refused %d; want 2 1 4 2", st.Sent, st.RobotsRequests, st.Allowed, st.Refused)
	}
	want := map[string]int64{"2xx": 1, "3xx": 1, "4xx": 1, "5xx": 1, "network": 0}
	for k, v := range want {
		if st.FetchStatus[k] != v {
			t.Errorf("FetchStatus = %v, want %v", st.FetchStatus, want)
			break
		}
	}
}

// TestSitemapsAbsolute checks that RobotsInfo.Sitemaps are resolved
// against the robots.txt URL.
func TestSitemapsAbsolute(t *testing.T) {
	s := newSite(t, serve(200, "Sitemap: /sitemap.xml\nSitemap: https://cdn.example/s.xml\nSitemap: ftp://x.example/s\n\nUser-agent: *\nDisallow:\n"))
	tr := newTestTransport(t, newClock(), Options{})
	info, err := tr.Robots(context.Background(), s.URL+"/x")
	if err != nil {
		t.Fatal(err)
	}
	want := s.URL + "/sitemap.xml https://cdn.example/s.xml"
	if got := strings.Join(info.Sitemaps, " "); got != want {
		t.Errorf("Sitemaps %q, want %q", got, want)
	}
}

// TestSitemapsAfterRedirect checks that relative Sitemap lines of a
// robots.txt reached through a redirect to another host resolve against
// the URL it was finally read from (RFC 3986 section 5.1.3), whether the
// record was fetched here, revalidated, or loaded from a shared store.
func TestSitemapsAfterRedirect(t *testing.T) {
	cdn := newSite(t, serve(404, ""))
	cdn.setPages(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "Sitemap: /maps/sitemap.xml\nSitemap: news.xml\n\nUser-agent: *\nDisallow: /private\n")
	})
	// The site's own robots.txt lives on the CDN, under another path.
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, cdn.URL+"/site/robots.txt", http.StatusMovedPermanently)
	})
	want := cdn.URL + "/maps/sitemap.xml " + cdn.URL + "/site/news.xml"
	c := newClock()
	store := NewMemoryCache(100, 1<<20)
	tr := newTestTransport(t, c, Options{Cache: store})
	check := func(when string, tr *Transport) {
		t.Helper()
		info, err := tr.Robots(context.Background(), s.URL+"/x")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if got := strings.Join(info.Sitemaps, " "); got != want {
			t.Errorf("%s: Sitemaps %q, want %q", when, got, want)
		}
	}
	check("fetched", tr)
	check("loaded from the store", newTestTransport(t, c, Options{Cache: store}))
	c.Advance(DefaultFreshness)
	check("revalidated", tr)
	if got := cdn.pageHits.Load(); got != 2 {
		t.Errorf("the CDN was asked %d times, want 2 (a fetch and a revalidation)", got)
	}
}

// TestRobotsOfRobotsTxtURL checks that Robots fetches the robots.txt of
// a URL that names /robots.txt itself: only a request for it is exempt
// from waiting for the fetch.
func TestRobotsOfRobotsTxtURL(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	tr := newTestTransport(t, newClock(), Options{})
	info, err := tr.Robots(context.Background(), s.URL+"/robots.txt")
	if err != nil || info.Outcome != Parsed || string(info.Body) != privateRobots {
		t.Fatalf("Robots = %+v, %v", info, err)
	}
	if got := s.robotsHits.Load(); got != 1 {
		t.Errorf("%d robots.txt fetches, want 1", got)
	}
}

// TestRenewalPanicRecovered checks the renewal's last line of defence:
// a panic in its own work (here the clock's, on the renewal's first
// reading of it) makes the origin unreachable for that fetch, with a
// back-off, and the state it falls back to parses nothing, since the
// parser may be what panicked: it keeps the earlier parse of the same
// body and holds none for another.
func TestRenewalPanicRecovered(t *testing.T) {
	c := newClock()
	var reads atomic.Int64
	now := func() time.Time {
		if reads.Add(1) == 1 {
			panic("clock broke")
		}
		return c.Now()
	}
	cfg := newConfig(Options{Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
	base := rtFunc(func(*http.Request) (*http.Response, error) {
		t.Error("the renewal fetched after a panic")
		return nil, errors.New("unexpected")
	})
	var cache robotsCache
	cache.init(&cfg, NewMemoryCache(16, DefaultCacheBytes), nil, base, now, c.Sleep, &counters{})
	body := []byte(privateRobots)
	prev := newState(record{Outcome: Parsed, Body: body, FetchedAt: c.Now(), Expires: c.Now()}, nil, parsedBody{body, policy.Parse(body)})
	o := cache.originFor(originID{host: "site.example"})
	o.st.Store(prev)
	st := cache.renew(context.Background(), o)
	switch {
	case st.rec.Outcome != Unreachable || !st.rec.RetryAt.After(c.Now()):
		t.Errorf("record %+v; want unreachable with a back-off", st.rec)
	case st.err == nil || !strings.Contains(st.err.Error(), "clock broke"):
		t.Errorf("err = %v; want the panic", st.err)
	case st.robots != prev.robots:
		t.Errorf("the good copy was parsed again; want the earlier parse of the same body")
	}

	other := newState(record{Outcome: Unreachable, Good: &record{Outcome: Parsed, Body: []byte("User-agent: *\nDisallow: /\n")}}, errors.New("panic"), prev.parsed())
	if other.robots != nil {
		t.Errorf("a body the earlier state did not parse was given its parse")
	}
}

// TestRenewalPanicKeepsTheNewestRecord checks that a panic later in the
// renewal, once it loaded a newer record another transport stored, falls
// back on that record: the origin goes unreachable with the stored copy
// as its last good one, not the older copy this transport held.
func TestRenewalPanicKeepsTheNewestRecord(t *testing.T) {
	c := newClock()
	var reads, panicAt atomic.Int64
	now := func() time.Time {
		if reads.Add(1) == panicAt.Load() {
			panic("clock broke")
		}
		return c.Now()
	}
	cfg := newConfig(Options{Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
	var cache robotsCache
	cache.init(&cfg, NewMemoryCache(16, DefaultCacheBytes), nil, rtFunc(func(*http.Request) (*http.Response, error) {
		t.Error("the renewal fetched after a panic")
		return nil, errors.New("unexpected")
	}), now, c.Sleep, &counters{})
	old, newer := []byte(privateRobots), []byte("User-agent: *\nDisallow: /newer\n")
	o := cache.originFor(originID{host: "site.example"})
	o.st.Store(newState(record{Outcome: Parsed, Body: old, FetchedAt: c.Now(), Expires: c.Now()}, nil, parsedBody{old, policy.Parse(old)}))
	// Another transport fetched since; its copy is due as well.
	cache.save(context.Background(), o.key, record{Outcome: Parsed, Body: newer, FetchedAt: c.Now().Add(time.Second), Expires: c.Now()})
	// The renewal's first clock reading is the due check; the second,
	// as it fetches, panics.
	panicAt.Store(reads.Load() + 2)
	st := cache.renew(context.Background(), o)
	if st.rec.Outcome != Unreachable || st.rec.Good == nil || !bytes.Equal(st.rec.Good.Body, newer) {
		t.Errorf("record %+v; want unreachable, keeping the stored copy as the last good one", st.rec)
	}
}

// TestRenewalOfAFreshStateFetchesNothing checks that a renewal that finds
// the state brought up to date (by the renewal just before it, which its
// caller saw due) keeps that state and fetches nothing.
func TestRenewalOfAFreshStateFetchesNothing(t *testing.T) {
	c := newClock()
	cfg := newConfig(Options{Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
	var fetches atomic.Int64
	var cache robotsCache
	cache.init(&cfg, NewMemoryCache(16, DefaultCacheBytes), nil, rtFunc(func(r *http.Request) (*http.Response, error) {
		fetches.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(privateRobots)), Request: r}, nil
	}), c.Now, c.Sleep, &counters{})
	o := cache.originFor(originID{host: "site.example"})
	first := cache.renew(context.Background(), o)
	if again := cache.renew(context.Background(), o); again != first || fetches.Load() != 1 {
		t.Errorf("a renewal of a fresh state: %d fetches, same state %v; want 1 fetch and the same state", fetches.Load(), again == first)
	}
}
