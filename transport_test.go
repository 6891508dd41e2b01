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
	"testing/synctest"
	"time"
)

// TestOneFetchForManyRequests checks that 10,000 concurrent requests to a
// cold origin make exactly one robots.txt request.
func TestOneFetchForManyRequests(t *testing.T) {
	const n = 10000
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			<-release
			io.WriteString(w, privateRobots)
		})
		tr := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: -1})
		var done sync.WaitGroup
		var failed atomic.Int64
		for range n {
			done.Go(func() {
				if err := sendFrom(tr, "http://site.example/public"); err != nil {
					failed.Add(1)
				}
			})
		}
		synctest.Wait() // every request waits for the fetch
		close(release)
		bubbleWaitGroup(t, &done, "every request to finish")
		if got := len(site.robotsHits()); got != 1 {
			t.Errorf("%d robots.txt requests, want 1", got)
		}
		if pages := len(site.pageHits()); failed.Load() != 0 || pages != n {
			t.Errorf("%d requests failed, %d reached the site; want 0 and %d", failed.Load(), pages, n)
		}
	})
}

// TestCancelledWaiterLeavesFetch checks that a caller whose context ends
// while it waits for the robots.txt returns at once with its context's
// error, and that the fetch it started goes on for the others.
func TestCancelledWaiterLeavesFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		site := newFakeSite(func(w http.ResponseWriter, r *http.Request) {
			<-release
			io.WriteString(w, privateRobots)
		})
		tr := NewTransport(site, Options{UserAgent: "ExampleBot"})
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() { first <- tr.Check(ctx, "http://site.example/private") }()
		synctest.Wait() // the fetch started, and waits
		second := make(chan error, 1)
		go func() { second <- tr.Check(context.Background(), "http://site.example/private") }()
		synctest.Wait()
		cancel()
		if err := bubbleRecv(t, first, "the cancelled caller to return"); err != context.Canceled {
			t.Errorf("cancelled caller got %v, want context.Canceled itself", err)
		}
		close(release)
		var de *DisallowedError
		if err := bubbleRecv(t, second, "the other caller's decision"); !errors.As(err, &de) || de.Rule == nil {
			t.Errorf("other caller got %v, want refused by the rule of the fetch the cancelled caller started", err)
		}
		if got := len(site.robotsHits()); got != 1 {
			t.Errorf("%d fetches, want 1", got)
		}
	})
}

// TestPassThrough checks that requests whose scheme is not http or https
// TestIdentityThatCannotBeUsedFailsEveryRequest: a UserAgent no header
// may carry, and an Agents entry that names no group, fail every request,
// check and Robots with an error naming the option, sending nothing; "*"
// and product tokens are kept.
func TestIdentityThatCannotBeUsedFailsEveryRequest(t *testing.T) {
	tests := []struct {
		opts Options
		want string // in the error; "" for none
	}{
		{Options{UserAgent: "ExampleBot/1.0\r\nX-Injected: 1"}, "Options.UserAgent"},
		{Options{UserAgent: "Example\x00Bot"}, "Options.UserAgent"},
		{Options{Agents: []string{"Googlebot/2.1"}}, `Options.Agents entry "Googlebot/2.1" is not a product token: use letters, digits, "-" and "_" (RFC 9309 section 2.2.1), such as "Googlebot"`},
		{Options{Agents: []string{"ExampleBot", ""}}, `Options.Agents entry ""`},
		{Options{Agents: []string{"Ünï"}}, `Options.Agents entry "Ünï"`},
		{Options{UserAgent: "ExampleBot/1.0 (+https://example.com/bot; \tcrawl)", Agents: []string{"ExampleBot-News", "ExampleBot", "*"}}, ""},
	}
	for _, tt := range tests {
		sent := 0
		tr := NewTransport(rtFunc(func(r *http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(allowAll)), Request: r}, nil
		}), tt.opts)
		req, _ := http.NewRequest(http.MethodGet, "http://site.example/page", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		errCheck := tr.Check(context.Background(), "http://site.example/page")
		_, errNext := tr.NextFree(context.Background(), "http://site.example/page")
		_, errRobots := tr.Robots(context.Background(), "http://site.example/page")
		for _, e := range []error{err, errCheck, errNext, errRobots} {
			if tt.want == "" && e != nil || tt.want != "" && (e == nil || !strings.Contains(e.Error(), tt.want)) {
				t.Errorf("%+v: %v; want an error containing %q", tt.opts, e, tt.want)
			}
		}
		if tt.want != "" && sent != 0 {
			t.Errorf("%+v: %d requests went out; want none", tt.opts, sent)
		}
	}
}

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
// through at once, on the bubble's clock.
func TestOriginsDoNotWaitOnEachOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		sites := map[string]*fakeSite{
			"slow.example":  newFakeSite(func(w http.ResponseWriter, r *http.Request) { <-release }),
			"paced.example": newFakeSite(serve(200, "User-agent: *\nCrawl-delay: 3600\n")),
			"free.example":  newFakeSite(serve(200, "User-agent: *\nDisallow: /private\n")),
		}
		base := rtFunc(func(r *http.Request) (*http.Response, error) { return sites[r.URL.Host].RoundTrip(r) })
		tr := newBubbleTransport(base, Options{MaxCrawlDelay: 2 * time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		go tr.Check(ctx, "http://slow.example/x")
		synctest.Wait()
		if n := len(sites["slow.example"].robotsHits()); n != 1 {
			t.Fatalf("slow origin's robots.txt asked %d times, want 1, hanging", n)
		}
		start := time.Now()
		if _, err := bubbleGet(t, tr, "http://paced.example/first"); err != nil {
			t.Fatal(err)
		}
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://paced.example/second", nil)
			tr.RoundTrip(req)
		}()
		synctest.Wait()
		for i := range 100 {
			if _, err := bubbleGet(t, tr, "http://free.example/page/"+strconv.Itoa(i)); err != nil {
				t.Fatalf("request to a free origin: %v", err)
			}
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("a request to the paced origin and 100 to a free one took %v of the clock, want none: they waited on the other origins", waited)
		}
		if got := len(sites["free.example"].pageHits()); got != 100 {
			t.Errorf("free origin served %d pages, want 100", got)
		}
		if got := len(sites["paced.example"].pageHits()); got != 1 {
			t.Errorf("paced origin served %d pages, want 1: the second is held for its slot", got)
		}
		cancel()
		close(release)
	})
}

// hostRobots answers the robots.txt of victim.example, which disallows
// /victim-only, when asked with that Host, and otherwise one that
// disallows /private.
func hostRobots(w http.ResponseWriter, r *http.Request) {
	if r.Host == "victim.example" {
		w.Write([]byte("User-agent: *\nDisallow: /victim-only\n"))
		return
	}
	w.Write([]byte("User-agent: *\nDisallow: /private\n"))
}

// TestRequestReachesDisallowed checks that each way of sending a request
// that the server serves from a disallowed path is refused before it
// leaves: an absolute-form Opaque, a Host override naming a site whose
// robots.txt disallows the path, and repeated slashes around dot segments.
func TestRequestReachesDisallowed(t *testing.T) {
	s := newSite(t, hostRobots)
	addr := strings.TrimPrefix(s.URL, "http://")
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"absolute-form opaque", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL, nil)
			r.URL.Opaque = "//" + addr + "/private/b"
			return r
		}},
		{"host override", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL+"/victim-only/page", nil)
			r.Host = "victim.example"
			return r
		}},
		{"slashes before dot segment", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL+"/public//../private/secret", nil)
			return r
		}},
		{"slashes after dot segment", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL+"/public/..//private/secret", nil)
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTransport(t, newClock(), Options{})
			resp, err := tr.RoundTrip(tc.req())
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, ErrDisallowed) {
				t.Errorf("RoundTrip = %v, want ErrDisallowed", err)
			}
		})
	}
	if n := s.pageHits.Load(); n != 0 {
		t.Errorf("the server saw %d page requests, want 0", n)
	}
}
