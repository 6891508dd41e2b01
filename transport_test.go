package robots

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOneFetchForManyRequests checks that 10,000 concurrent requests to a
// cold origin make exactly one robots.txt request.
func TestOneFetchForManyRequests(t *testing.T) {
	const n = 10000
	release := make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		hold(r, release)
		io.WriteString(w, privateRobots)
	})
	base := &http.Transport{MaxConnsPerHost: 32}
	t.Cleanup(base.CloseIdleConnections)
	c := newClock()
	tr := NewTransport(base, Options{UserAgent: "ExampleBot", MinDelay: -1, Now: c.Now, Sleep: c.Sleep})
	var started, done sync.WaitGroup
	var failed atomic.Int64
	started.Add(n)
	for range n {
		done.Go(func() {
			started.Done()
			if body, err := get(t, tr, s.URL+"/public"); err != nil || body != "page /public" {
				failed.Add(1)
			}
		})
	}
	waitGroup(t, &started, "every request to start")
	waitFor(t, "the robots.txt fetch to start", func() bool { return s.robotsHits.Load() > 0 })
	close(release)
	waitGroup(t, &done, "every request to finish")
	if got := s.robotsHits.Load(); got != 1 {
		t.Errorf("%d robots.txt requests, want 1", got)
	}
	if failed.Load() != 0 || s.pageHits.Load() != n {
		t.Errorf("%d requests failed, %d reached the server; want 0 and %d", failed.Load(), s.pageHits.Load(), n)
	}
}

// TestCancelledWaiterLeavesFetch checks that a caller whose context ends
// while it waits for the robots.txt returns at once with its context's
// error, and that the fetch it started goes on for the others.
func TestCancelledWaiterLeavesFetch(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		hold(r, release)
		io.WriteString(w, privateRobots)
	})
	tr := newTestTransport(t, newClock(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- tr.Check(ctx, s.URL+"/private") }()
	waitFor(t, "the robots.txt fetch to start", func() bool { return s.robotsHits.Load() > 0 })
	second := make(chan error, 1)
	go func() { second <- tr.Check(context.Background(), s.URL+"/private") }()
	cancel()
	if err := recv(t, first, "the cancelled caller to return"); err != context.Canceled {
		t.Errorf("cancelled caller got %v, want context.Canceled itself", err)
	}
	close(release)
	var de *DisallowedError
	if err := recv(t, second, "the other caller's decision"); !errors.As(err, &de) || de.Rule == nil {
		t.Errorf("other caller got %v, want refused by the rule of the fetch the cancelled caller started", err)
	}
	if got := s.robotsHits.Load(); got != 1 {
		t.Errorf("%d fetches, want 1", got)
	}
}

// TestDotSegments checks that a path whose dot segments resolve to a
// disallowed path is refused, whatever its spelling.
func TestDotSegments(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	tr := newTestTransport(t, newClock(), Options{})
	for _, tc := range []struct {
		path     string
		resolved string // empty: allowed
	}{
		{"/public/../private", "/private"},
		{"/public/%2e%2E/private/x?y=1", "/private/x?y=1"},
		{"/public/.%2E/private", "/private"},
		{"/public/./../private", "/private"},
		{"/public/./page", ""},
		{"/a/b/../../public", ""},
		{"/public/..%2fprivate", "/private"}, // a server that decodes %2F first serves /private
	} {
		t.Run(tc.path, func(t *testing.T) {
			err := tr.Check(context.Background(), s.URL+tc.path)
			var de *DisallowedError
			switch {
			case tc.resolved == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.resolved != "" && (!errors.As(err, &de) || de.Resolved != tc.resolved):
				t.Errorf("Check = %v, want refused as %s", err, tc.resolved)
			}
		})
	}
}

// TestOrigins checks that every spelling of an origin shares one
// robots.txt, fetched from its canonical form.
func TestOrigins(t *testing.T) {
	base := &robotsLog{status: 404, body: ""}
	c := newClock()
	tr := NewTransport(base, Options{MinDelay: -1, Now: c.Now, Sleep: c.Sleep})
	for _, u := range []string{
		"HTTP://Site.Example:80/a",
		"http://site.example/b",
		"https://site.example:443/c",
		"https://SITE.example/d",
		"https://site.example:8443/e",
		"http://Bücher.example/f",
		"http://xn--bcher-kva.example/g",
		"http://[::1]:80/h",
		"http://127.0.0.1:080/i",
	} {
		if _, err := get(t, tr, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	want := []string{
		"http://site.example/robots.txt",
		"https://site.example/robots.txt",
		"https://site.example:8443/robots.txt",
		"http://xn--bcher-kva.example/robots.txt",
		"http://[::1]/robots.txt",
		"http://127.0.0.1/robots.txt",
	}
	if fetched := base.fetched(); strings.Join(fetched, " ") != strings.Join(want, " ") {
		t.Errorf("fetched\n%s\nwant\n%s", strings.Join(fetched, "\n"), strings.Join(want, "\n"))
	}
}

// TestPassThrough checks that requests whose scheme is not http or https
// reach the base unchanged, with no robots.txt fetch.
func TestPassThrough(t *testing.T) {
	var got *http.Request
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := NewTransport(base, Options{UserAgent: "ExampleBot"})
	req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "ftp", Host: "files.example", Path: "/private"}, Header: http.Header{}}
	resp, err := tr.RoundTrip(req)
	if err != nil || got != req || len(req.Header) != 0 {
		t.Errorf("base got %p (want %p), header %v, err %v", got, req, req.Header, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	if st := tr.Stats(); st.Fetches[Parsed]+st.Fetches[Unavailable]+st.Fetches[Unreachable] != 0 {
		t.Errorf("a robots.txt was fetched: %+v", st)
	}
}

// TestRobotsTxtAlwaysAllowed checks that a request for /robots.txt itself
// goes through even when the file disallows everything.
func TestRobotsTxtAlwaysAllowed(t *testing.T) {
	s := newSite(t, serve(200, "User-agent: *\nDisallow: /\n"))
	tr := newTestTransport(t, newClock(), Options{})
	if body, err := get(t, tr, s.URL+"/robots.txt"); err != nil || !strings.Contains(body, "Disallow: /") {
		t.Errorf("GET /robots.txt = %q, %v", body, err)
	}
	if err := tr.Check(context.Background(), s.URL+"/robots.txt"); err != nil {
		t.Errorf("Check(/robots.txt) = %v", err)
	}
	if err := tr.Check(context.Background(), s.URL+"/other"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("Check(/other) = %v, want refused", err)
	}
}

// TestUserAgentAndTokens checks that the User-Agent is sent on robots.txt
// fetches and on requests carrying none, and that the product token or the
// explicit Agents select the groups.
func TestUserAgentAndTokens(t *testing.T) {
	const robots = "User-agent: examplebot\nDisallow: /bot\n\nUser-agent: ExampleBot-Image\nDisallow: /image\n\nUser-agent: *\nDisallow: /\n"
	var robotsUA, pageUA atomic.Value
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		robotsUA.Store(r.Header.Get("User-Agent"))
		io.WriteString(w, robots)
	})
	s.setPages(func(w http.ResponseWriter, r *http.Request) { pageUA.Store(r.Header.Get("User-Agent")) })
	const ua = "ExampleBot/1.0 (+https://example.com/bot)"
	tr := newTestTransport(t, newClock(), Options{UserAgent: ua})
	req, _ := http.NewRequest("GET", s.URL+"/page", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if robotsUA.Load() != ua || pageUA.Load() != ua {
		t.Errorf("User-Agent %v on the robots.txt fetch, %v on the page; want %q", robotsUA.Load(), pageUA.Load(), ua)
	}
	if _, ok := req.Header["User-Agent"]; ok {
		t.Errorf("the caller's request was given a User-Agent")
	}
	req.Header.Set("User-Agent", "Other/2")
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if pageUA.Load() != "Other/2" {
		t.Errorf("the request's own User-Agent was replaced by %v", pageUA.Load())
	}
	ctx := context.Background()
	if tr.Check(ctx, s.URL+"/bot") == nil || tr.Check(ctx, s.URL+"/image") != nil {
		t.Errorf("UserAgent token: want /bot refused and /image allowed by the examplebot group")
	}
	tr2 := newTestTransport(t, newClock(), Options{UserAgent: ua, Agents: []string{"ExampleBot-Image", "ExampleBot"}})
	if tr2.Check(ctx, s.URL+"/image") == nil || tr2.Check(ctx, s.URL+"/bot") != nil {
		t.Errorf("Agents: want /image refused and /bot allowed by the ExampleBot-Image group")
	}
	tr3 := newTestTransport(t, newClock(), Options{UserAgent: "OtherBot"})
	if err := tr3.Check(ctx, s.URL+"/page"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("a token without a group: %v, want the * group to refuse", err)
	}
}

// TestErrorMessages checks what a DisallowedError says.
func TestErrorMessages(t *testing.T) {
	s := newSite(t, serve(200, "# rules\nUser-agent: ExampleBot\n\nDisallow: /private\n"))
	down := newSite(t, serve(503, ""))
	c := newClock()
	tr := newTestTransport(t, c, Options{})
	client := &http.Client{Transport: tr}
	_, err := client.Get(s.URL + "/private?x=1")
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrDisallowed) {
		t.Fatalf("through http.Client: %v, want a *url.Error matching ErrDisallowed", err)
	}
	var de *DisallowedError
	errors.As(err, &de)
	want := "robots: refused for ExampleBot by Disallow: /private (line 4)"
	if de.Error() != want || de.Token != "ExampleBot" || de.Rule.Line != 4 || de.URL != s.URL+"/private?x=1" {
		t.Errorf("got  %s\nwant %s", de.Error(), want)
	}
	// The *url.Error names the URL; the refusal does not repeat it.
	if want := `Get "` + s.URL + `/private?x=1": ` + want; err.Error() != want {
		t.Errorf("through http.Client:\ngot  %v\nwant %s", err, want)
	}
	err = tr.Check(context.Background(), s.URL+"/x/../private")
	want = "robots: refused for ExampleBot by Disallow: /private (line 4) (resolved as /private)"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = tr.Check(context.Background(), down.URL+"/page")
	want = "robots: refused for ExampleBot: robots.txt unreachable (" + down.URL +
		"/robots.txt answered 503 Service Unavailable); retry after 2025-03-01T12:01:00Z"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestRobotsInfo checks the robots state Robots gives, fetched once.
func TestRobotsInfo(t *testing.T) {
	s := newSite(t, serve(200, "User-agent: *\nCrawl-delay: 3\nDisallow: /private\nSitemap: https://site.example/sitemap.xml\n"))
	c := newClock()
	tr := newTestTransport(t, c, Options{})
	ctx := context.Background()
	info, err := tr.Robots(ctx, s.URL+"/any/page")
	if err != nil {
		t.Fatal(err)
	}
	if info.Origin != s.URL || info.Outcome != Parsed || info.StatusCode != 200 || info.Delay != 3*time.Second ||
		!info.FetchedAt.Equal(c.Now()) || !info.Expires.Equal(c.Now().Add(24*time.Hour)) {
		t.Errorf("Robots = %+v", info)
	}
	if sm := info.Policy.Sitemaps(); len(sm) != 1 || sm[0] != "https://site.example/sitemap.xml" {
		t.Errorf("Sitemaps = %v", sm)
	}
	tr.Check(ctx, s.URL+"/private")
	if s.robotsHits.Load() != 1 {
		t.Errorf("%d fetches, want 1", s.robotsHits.Load())
	}
	if _, err := tr.Robots(ctx, "mailto:someone@site.example"); err == nil {
		t.Errorf("Robots accepted a mailto: URL")
	}
	if _, err := tr.Robots(ctx, "http:///nohost"); err == nil {
		t.Errorf("Robots accepted a URL without a host")
	}
	if Parsed.String() != "parsed" || Unavailable.String() != "unavailable" || Unreachable.String() != "unreachable" {
		t.Errorf("Outcome strings: %v %v %v", Parsed, Unavailable, Unreachable)
	}
}

// TestLoggerAndStats checks that fetches and refusals are logged and
// counted.
func TestLoggerAndStats(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil))
	c := newClock()
	tr := newTestTransport(t, c, Options{Logger: logger, MinDelay: 2 * time.Second})
	get(t, tr, s.URL+"/a")
	get(t, tr, s.URL+"/b")
	get(t, tr, s.URL+"/private")
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	for _, want := range []string{`"outcome":"parsed"`, `"status":200`, `"rule":"Disallow: /private"`, `"line":2`, `"url":"` + s.URL + `/private"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	st := tr.Stats()
	if st.Fetches[Parsed] != 1 || st.Allowed != 2 || st.Refused != 1 || st.Origins != 1 || st.Waited != 2*time.Second {
		t.Errorf("Stats = %+v", st)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestOriginsDoNotWaitOnEachOther checks that nothing is serialised across
// origins: while one origin's robots.txt fetch hangs and another origin's
// request waits for its politeness slot, requests to a third origin go
// through.
func TestOriginsDoNotWaitOnEachOther(t *testing.T) {
	release, fetching := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(fetching) })
		hold(r, release)
	})
	defer close(release)
	paced := newSite(t, serve(200, "User-agent: *\nCrawl-delay: 3600\n"))
	free := newSite(t, serve(200, "User-agent: *\nDisallow: /private\n"))

	clock := newClock()
	slept := make(chan struct{})
	tr := newTestTransport(t, clock, Options{})
	// The paced origin's second request parks in Sleep until the test ends.
	tr.cfg.sleep = func(ctx context.Context, d time.Duration) error {
		close(slept)
		holdCtx(ctx, nil)
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Check(ctx, slow.URL+"/x")
	if _, err := get(t, tr, paced.URL+"/first"); err != nil {
		t.Fatal(err)
	}
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, paced.URL+"/second", nil)
		tr.RoundTrip(req)
	}()
	recv(t, slept, "the paced origin's second request to wait")
	recv(t, fetching, "the slow origin's robots.txt fetch to start")
	done := make(chan error, 1)
	go func() {
		for i := range 100 {
			if _, err := get(t, tr, free.URL+"/page/"+strconv.Itoa(i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	// waitCeiling is a generous ceiling: only a lock shared between
	// origins could hold 100 requests to a local server this long.
	if err := recv(t, done, "100 requests to a free origin while the others wait"); err != nil {
		t.Fatalf("request to a free origin: %v", err)
	}
	if got := free.pageHits.Load(); got != 100 {
		t.Errorf("free origin served %d pages, want 100", got)
	}
}
