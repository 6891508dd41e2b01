package robots

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crawlkit/robots/policy"
)

const privateRobots = "User-agent: *\nDisallow: /private\n"

// TestStatus2xxIsParsed checks the first row of the status table: a 2xx
// robots.txt is parsed and its rules decide (RFC 9309 section 2.3.1.1).
func TestStatus2xxIsParsed(t *testing.T) {
	for _, code := range []int{200, 203} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			s := newSite(t, serve(code, privateRobots))
			tr := newTestTransport(t, newClock(), Options{})
			if body, err := get(t, tr, s.URL+"/public"); err != nil || body != "page /public" {
				t.Fatalf("allowed page: %q, %v", body, err)
			}
			_, err := get(t, tr, s.URL+"/private/x")
			var de *DisallowedError
			if !errors.Is(err, ErrDisallowed) || !errors.As(err, &de) || de.Rule == nil || de.Rule.Pattern != "/private" {
				t.Fatalf("disallowed page: %v", err)
			}
			if got := s.pageHits.Load(); got != 1 {
				t.Errorf("%d page requests reached the server, want 1 (the refused one must not)", got)
			}
			if got := s.robotsHits.Load(); got != 1 {
				t.Errorf("%d robots.txt fetches, want 1", got)
			}
			info, err := tr.Robots(context.Background(), s.URL)
			if err != nil || info.Outcome != Parsed || info.StatusCode != code || info.Policy == nil || string(info.Body) != privateRobots {
				t.Errorf("Robots = %+v, %v", info, err)
			}
		})
	}
}

// TestStatusSizeLimit checks that only the first 500 KiB are read and
// that the line straddling the limit is dropped (RFC 9309 section 2.5).
func TestStatusSizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < policy.MaxSize-200 {
		b.WriteString("# " + strings.Repeat("x", 60) + "\n")
	}
	b.WriteString("#" + strings.Repeat("x", policy.MaxSize-6-b.Len()-2) + "\n")
	before := b.Len()
	b.WriteString("Disallow: /cut\nDisallow: /past\n")
	if before >= policy.MaxSize || before+len("Disallow: /cut\n") <= policy.MaxSize {
		t.Fatalf("fixture: /cut line at %d does not straddle the limit", before)
	}
	s := newSite(t, serve(200, b.String()))
	tr := newTestTransport(t, newClock(), Options{})
	ctx := context.Background()
	if err := tr.Check(ctx, s.URL+"/early"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("/early (before the limit): %v, want refused", err)
	}
	for _, p := range []string{"/cut", "/past"} {
		if err := tr.Check(ctx, s.URL+p); err != nil {
			t.Errorf("%s (past the limit): %v, want allowed", p, err)
		}
	}
	info, _ := tr.Robots(ctx, s.URL)
	// Size counts what was kept, never more than MaxSize (it once said
	// 512,001 for the byte read past the limit).
	if !info.Truncated || info.Size != int64(before) || len(info.Body) != before {
		t.Errorf("Truncated, Size = %v, %d; want true, %d", info.Truncated, info.Size, before)
	}
	larger := newTestTransport(t, newClock(), Options{MaxSize: 2 * policy.MaxSize})
	if err := larger.Check(ctx, s.URL+"/past"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("with MaxSize 1000 KiB: /past %v, want refused", err)
	}
	smaller := newTestTransport(t, newClock(), Options{MaxSize: 1000})
	if err := smaller.Check(ctx, s.URL+"/past"); err != nil {
		t.Errorf("with MaxSize below 500 KiB: /past %v, want the 500 KiB limit kept", err)
	}
}

// TestStatusExactSize checks that a robots.txt of exactly the size
// limit is read whole, its last line too when no newline ends it, and is
// not reported truncated, plain or gzip-encoded.
func TestStatusExactSize(t *testing.T) {
	head := "User-agent: *\nDisallow: /early\n"
	last := "Disallow: /last"
	body := head + strings.Repeat("#\n", (policy.MaxSize-len(head)-len(last))/2) + strings.Repeat("#", (policy.MaxSize-len(head)-len(last))%2) + last
	if len(body) != policy.MaxSize {
		t.Fatalf("fixture is %d bytes, want %d", len(body), policy.MaxSize)
	}
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprint("gzip=", gz), func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if gz {
					w.Header().Set("Content-Encoding", "gzip")
					w.Write(gzipped(t, body))
					return
				}
				io.WriteString(w, body)
			})
			tr := newTestTransport(t, newClock(), Options{})
			ctx := context.Background()
			for _, p := range []string{"/early", "/last"} {
				if err := tr.Check(ctx, s.URL+p); !errors.Is(err, ErrDisallowed) {
					t.Errorf("%s: %v, want refused", p, err)
				}
			}
			info, _ := tr.Robots(ctx, s.URL)
			if info.Truncated || info.Size != int64(policy.MaxSize) || len(info.Body) != policy.MaxSize {
				t.Errorf("Truncated, Size = %v, %d; want false, %d", info.Truncated, info.Size, policy.MaxSize)
			}
		})
	}
}

// countingBase counts the response body bytes read through it.
func countingBase(n *atomic.Int64) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			resp.Body = &countingBody{ReadCloser: resp.Body, n: n}
		}
		return resp, err
	})
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestStatusHugeBody checks that a 100 MB or endless robots.txt costs no
// more than the size limit.
func TestStatusHugeBody(t *testing.T) {
	chunk := strings.Repeat("# padding padding padding padding padding padding\n", 1300)
	for _, tc := range []struct {
		name  string
		total int // 0: endless
	}{{"100 MB", 100 << 20}, {"never-ending", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.total > 0 {
					w.Header().Set("Content-Length", fmt.Sprint(tc.total))
				}
				n, _ := io.WriteString(w, privateRobots)
				for tc.total == 0 || n < tc.total {
					part := chunk
					if tc.total > 0 && tc.total-n < len(part) {
						part = part[:tc.total-n]
					}
					m, err := io.WriteString(w, part)
					if err != nil {
						return
					}
					n += m
				}
			})
			var read atomic.Int64
			c := newClock()
			tr := NewTransport(countingBase(&read), Options{UserAgent: "ExampleBot", Now: c.Now, Sleep: c.Sleep})
			if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Fatalf("Check(/private) = %v, want refused by the rules read", err)
			}
			if got := read.Load(); got > policy.MaxSize+1 {
				t.Errorf("read %d bytes of the body, want at most %d", got, policy.MaxSize+1)
			}
		})
	}
}

// TestStatusTimeout checks that a robots.txt that does not arrive within
// FetchTimeout, headers or body, is unreachable.
func TestStatusTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
		{"body stalls", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "User-agent: *\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.handler)
			tr := newTestTransport(t, newClock(), Options{FetchTimeout: 100 * time.Millisecond})
			err := tr.Check(context.Background(), s.URL+"/page")
			var de *DisallowedError
			if !errors.As(err, &de) || !de.Unreachable || de.RetryAt.IsZero() {
				t.Fatalf("Check = %v, want refused as unreachable", err)
			}
			if !strings.Contains(err.Error(), "no complete answer within 100ms") {
				t.Errorf("error %q does not name the timeout", err)
			}
		})
	}
}

// redirectServer serves /robots.txt as the first of hops redirects
// /r1, /r2, ... with code, the last leading to final.
func redirectServer(t *testing.T, code, hops int, final string, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n := 0
		if r.URL.Path != "/robots.txt" {
			fmt.Sscanf(r.URL.Path, "/r%d", &n)
		}
		switch {
		case r.URL.Path == "/final":
			io.WriteString(w, final)
		case n < hops-1:
			http.Redirect(w, r, fmt.Sprintf("/r%d", n+1), code)
		default:
			http.Redirect(w, r, "/final", code)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestStatus3xx checks that redirects are followed up to five hops and a
// sixth, or a loop, makes the robots.txt unavailable (RFC 9309 section
// 2.3.1.2).
func TestStatus3xx(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprintf("%d followed five times", code), func(t *testing.T) {
			var hits atomic.Int64
			srv := redirectServer(t, code, 5, privateRobots, &hits)
			tr := newTestTransport(t, newClock(), Options{})
			if err := tr.Check(context.Background(), srv.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Fatalf("Check(/private) = %v, want refused by the rules after 5 redirects", err)
			}
			if hits.Load() != 6 {
				t.Errorf("%d requests, want 6", hits.Load())
			}
		})
	}
	t.Run("sixth redirect is unavailable", func(t *testing.T) {
		var hits atomic.Int64
		srv := redirectServer(t, 301, 6, privateRobots, &hits)
		tr := newTestTransport(t, newClock(), Options{})
		if err := tr.Check(context.Background(), srv.URL+"/private"); err != nil {
			t.Fatalf("Check(/private) = %v, want allowed (unavailable)", err)
		}
		info, _ := tr.Robots(context.Background(), srv.URL)
		if info.Outcome != Unavailable || hits.Load() != 6 {
			t.Errorf("outcome %v after %d requests, want unavailable after 6", info.Outcome, hits.Load())
		}
	})
	for name, again := range map[string][2]string{
		"loop is unavailable, told at once":      {"/again", "/robots.txt"},
		"loop through fragments is told at once": {"/again#a", "/robots.txt#b"},
	} {
		t.Run(name, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.URL.Path == "/robots.txt" {
					http.Redirect(w, r, again[0], http.StatusFound)
					return
				}
				http.Redirect(w, r, again[1], http.StatusFound)
			}))
			t.Cleanup(srv.Close)
			tr := newTestTransport(t, newClock(), Options{})
			info, err := tr.Robots(context.Background(), srv.URL)
			if err != nil || info.Outcome != Unavailable || tr.Check(context.Background(), srv.URL+"/x") != nil {
				t.Errorf("Robots = %v, %v; want unavailable and allowed", info.Outcome, err)
			}
			// A fragment is never sent: the second redirect leads back.
			if n := hits.Load(); n != 2 {
				t.Errorf("%d requests, want 2: the loop told when it leads back", n)
			}
		})
	}
	t.Run("another origin's file governs the redirecting origin", func(t *testing.T) {
		other := newSite(t, serve(200, privateRobots))
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/robots.txt", http.StatusMovedPermanently)
		})
		tr := newTestTransport(t, newClock(), Options{})
		if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("Check(/private) = %v, want refused by the redirect target's rules", err)
		}
	})
	t.Run("negative MaxRedirects follows none", func(t *testing.T) {
		var hits atomic.Int64
		srv := redirectServer(t, 301, 1, privateRobots, &hits)
		tr := newTestTransport(t, newClock(), Options{MaxRedirects: -1})
		if err := tr.Check(context.Background(), srv.URL+"/private"); err != nil || hits.Load() != 1 {
			t.Errorf("Check(/private) = %v after %d requests, want allowed (unavailable) after 1", err, hits.Load())
		}
	})
	t.Run("redirect to a non-http URL is not followed", func(t *testing.T) {
		// The base answers the robots.txt with a redirect to an FTP URL
		// and fails anything else, as http.Transport fails an ftp URL:
		// following the redirect would make the origin unreachable.
		var mu sync.Mutex
		var asked []string
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			asked = append(asked, r.URL.String())
			mu.Unlock()
			if r.URL.Scheme != "http" {
				return nil, fmt.Errorf("unsupported protocol scheme %q", r.URL.Scheme)
			}
			h := http.Header{"Location": {"ftp://files.example/robots.txt"}}
			return &http.Response{StatusCode: http.StatusMovedPermanently, Header: h, Body: http.NoBody, Request: r}, nil
		})
		c := newClock()
		tr := NewTransport(base, Options{UserAgent: "ExampleBot", Now: c.Now, Sleep: c.Sleep, MinDelay: -1})
		if err := tr.Check(context.Background(), "http://site.example/private"); err != nil {
			t.Errorf("Check(/private) = %v, want allowed: a robots.txt not reached is unavailable", err)
		}
		info, err := tr.Robots(context.Background(), "http://site.example/")
		if err != nil || info.Outcome != Unavailable || info.StatusCode != http.StatusMovedPermanently {
			t.Errorf("Robots = %v (status %d), %v; want unavailable on the 301", info.Outcome, info.StatusCode, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 1 || asked[0] != "http://site.example/robots.txt" {
			t.Errorf("the base was asked for %q, want only http://site.example/robots.txt", asked)
		}
	})
	t.Run("Host override not carried to another host", func(t *testing.T) {
		// The URL's server answers for the overriding site with a
		// redirect to another server, which must be asked for its own
		// name: the override names the first server only.
		var otherHost atomic.Value
		other := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			otherHost.Store(r.Host)
			io.WriteString(w, "User-agent: *\nDisallow: /moved-rules\n")
		})
		first := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "victim.example" {
				t.Errorf("the first server was asked with Host %q, want the override", r.Host)
			}
			http.Redirect(w, r, other.URL+"/robots.txt", http.StatusMovedPermanently)
		})
		tr := newTestTransport(t, newClock(), Options{})
		req, _ := http.NewRequest(http.MethodGet, first.URL+"/moved-rules/page", nil)
		req.Host = "victim.example"
		if _, err := tr.RoundTrip(req); !errors.Is(err, ErrDisallowed) {
			t.Errorf("RoundTrip = %v, want refused by the redirect target's rules", err)
		}
		want := strings.TrimPrefix(other.URL, "http://")
		if got, _ := otherHost.Load().(string); got != want {
			t.Errorf("the redirect target was asked with Host %q, want its own %q", got, want)
		}
	})
	t.Run("redirect without Location is unavailable", func(t *testing.T) {
		s := newSite(t, serve(302, privateRobots))
		tr := newTestTransport(t, newClock(), Options{})
		if err := tr.Check(context.Background(), s.URL+"/private"); err != nil {
			t.Errorf("Check(/private) = %v, want allowed", err)
		}
	})
}

// TestStatus4xx checks that a 4xx other than 429 makes the robots.txt
// unavailable: every request is allowed (RFC 9309 section 2.3.1.3).
func TestStatus4xx(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 410, 451} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			s := newSite(t, serve(code, "User-agent: *\nDisallow: /\n"))
			tr := newTestTransport(t, newClock(), Options{})
			if body, err := get(t, tr, s.URL+"/private"); err != nil || body != "page /private" {
				t.Fatalf("GET /private = %q, %v; want allowed", body, err)
			}
			info, _ := tr.Robots(context.Background(), s.URL)
			if info.Outcome != Unavailable || info.StatusCode != code || info.Policy != nil {
				t.Errorf("Robots = %v %d %v, want unavailable %d with no policy", info.Outcome, info.StatusCode, info.Policy, code)
			}
			if st := tr.Stats(); st.Fetches[Unavailable] != 1 || st.Fetches[Unreachable] != 0 || st.Fetches[Parsed] != 0 || st.FetchStatus["4xx"] != 1 {
				t.Errorf("Fetches %v, FetchStatus %v; want one unavailable 4xx fetch", st.Fetches, st.FetchStatus)
			}
		})
	}
}

// TestStatusUnreachable checks that 429, 5xx, network errors and broken
// bodies refuse every request with a retry time (RFC 9309 section
// 2.3.1.4).
func TestStatusUnreachable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	broken := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, "User-agent: *\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		url     string // instead of the site
	}{
		{name: "429 counts as a server error", handler: serve(429, privateRobots)},
		{name: "500", handler: serve(500, privateRobots)},
		{name: "503", handler: serve(503, privateRobots)},
		{name: "599", handler: serve(599, privateRobots)},
		{name: "a proxy's 407: the site not reached", handler: serve(407, privateRobots)},
		{name: "network error", url: closed.URL},
		{name: "broken body", handler: broken},
		{name: "undecodable gzip", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "not gzip at all")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.url
			var s *site
			if base == "" {
				s = newSite(t, tc.handler)
				base = s.URL
			}
			c := newClock()
			tr := newTestTransport(t, c, Options{})
			_, err := get(t, tr, base+"/public")
			var de *DisallowedError
			if !errors.Is(err, ErrDisallowed) || !errors.As(err, &de) || !de.Unreachable || de.Rule != nil {
				t.Fatalf("GET /public = %v, want refused as unreachable", err)
			}
			if want := c.Now().Add(DefaultMinBackoff); !de.RetryAt.Equal(want) {
				t.Errorf("RetryAt = %v, want %v", de.RetryAt, want)
			}
			if s != nil && s.pageHits.Load() != 0 {
				t.Errorf("the refused request reached the server")
			}
			info, _ := tr.Robots(context.Background(), base)
			if info.Outcome != Unreachable || info.Err == nil || info.Policy != nil {
				t.Errorf("Robots = %v, err %v, policy %v; want unreachable with an error", info.Outcome, info.Err, info.Policy)
			}
		})
	}
}

func gzipped(t *testing.T, s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGzip checks that a gzip-encoded robots.txt is decoded and that the
// size limit counts decoded bytes.
func TestGzip(t *testing.T) {
	long := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding\n", 2*policy.MaxSize/10) + "Disallow: /past\n"
	for _, tc := range []struct {
		name                string
		body                string
		early, past         bool // allowed?
		truncated           bool
		wantSize, maxRawLen int64
	}{
		{name: "decoded", body: privateRobots + "Disallow: /past\n", early: true, past: false, wantSize: int64(len(privateRobots) + 16)},
		{name: "limit counts decoded bytes", body: long, early: false, past: true, truncated: true, wantSize: int64(len(policy.Truncate([]byte(long), policy.MaxSize)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zipped := gzipped(t, tc.body)
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Accept-Encoding") != "gzip" {
					t.Errorf("Accept-Encoding %q, want gzip", r.Header.Get("Accept-Encoding"))
				}
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(zipped)
			})
			var read atomic.Int64
			c := newClock()
			tr := NewTransport(countingBase(&read), Options{Now: c.Now, Sleep: c.Sleep})
			ctx := context.Background()
			if err := tr.Check(ctx, s.URL+"/early"); (err == nil) != tc.early {
				t.Errorf("/early: %v, want allowed=%v", err, tc.early)
			}
			if err := tr.Check(ctx, s.URL+"/past"); (err == nil) != tc.past {
				t.Errorf("/past: %v, want allowed=%v", err, tc.past)
			}
			info, _ := tr.Robots(ctx, s.URL)
			if info.Size != tc.wantSize || info.Truncated != tc.truncated {
				t.Errorf("Size, Truncated = %d, %v; want %d, %v", info.Size, info.Truncated, tc.wantSize, tc.truncated)
			}
			if read.Load() > int64(len(zipped)) {
				t.Errorf("read %d compressed bytes of %d", read.Load(), len(zipped))
			}
		})
	}
}

// FuzzReadLimited checks that whatever the body, no more than the limit
// is kept and what is kept ends at a line end.
func FuzzReadLimited(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /x\n"), false)
	f.Add([]byte(strings.Repeat("a\n", 100)), true)
	f.Fuzz(func(t *testing.T, body []byte, gzipped bool) {
		const limit = 64
		enc := ""
		if gzipped {
			enc = "gzip"
		}
		kept, truncated, err := readLimited(bytes.NewReader(body), enc, limit)
		if err != nil {
			return
		}
		if len(kept) > limit {
			t.Fatalf("kept %d bytes, limit %d", len(kept), limit)
		}
		if truncated && len(kept) > 0 && !bytes.ContainsAny(kept[len(kept)-1:], "\r\n") {
			t.Fatalf("truncated body %q ends mid-line", kept)
		}
	})
}

// TestMaxSizeClamped checks that a MaxSize of math.MaxInt reads plain
// and gzip files in full instead of overflowing into an empty or
// unreachable robots.txt.
func TestMaxSizeClamped(t *testing.T) {
	for _, enc := range []string{"", "gzip"} {
		t.Run("encoding "+enc, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if enc == "gzip" {
					w.Header().Set("Content-Encoding", "gzip")
					w.Write(gzipped(t, privateRobots))
					return
				}
				io.WriteString(w, privateRobots)
			})
			tr := newTestTransport(t, newClock(), Options{MaxSize: math.MaxInt})
			if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("/private: %v, want refused", err)
			}
			if info, _ := tr.Robots(context.Background(), s.URL); info.Outcome != Parsed || string(info.Body) != privateRobots {
				t.Errorf("Robots = %v %q", info.Outcome, info.Body)
			}
		})
	}
	if got := newConfig(Options{MaxSize: math.MaxInt}).maxSize; got != MaxMaxSize {
		t.Errorf("maxSize %d, want MaxMaxSize", got)
	}
	if got := newConfig(Options{MaxSize: 1}).maxSize; got != policy.MaxSize {
		t.Errorf("maxSize %d, want policy.MaxSize", got)
	}
}

// TestRetryAfterParse checks the reading of Retry-After values.
func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{" 5 ", 5 * time.Second},
		{"99999999999999999999", 1<<63 - 1},
		{"-5", 0},
		{"5s", 0},
		{"Sat, 01 Mar 2025 12:01:00 GMT", time.Minute},
		{"Saturday, 01-Mar-25 12:01:00 GMT", time.Minute},
	} {
		if got := retryAfter(http.Header{"Retry-After": {tc.in}}, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestRetryAfterAsksAWait: RetryAfter names a wait for a 429 or 503 whose
// Retry-After is a time to come, and none for any other response, as the
// Transport pauses only then.
func TestRetryAfterAsksAWait(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status int
		value  string
		want   time.Duration // 0: no wait
	}{
		{429, "5", 5 * time.Second},
		{503, "Sat, 01 Mar 2025 12:01:00 GMT", time.Minute},
		{503, "0", 0},
		{503, "soon", 0},
		{503, "Sat, 01 Mar 2025 11:59:00 GMT", 0},
		{429, "", 0},
		{500, "5", 0},
		{200, "5", 0},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Retry-After": {tc.value}}}
		until, ok := RetryAfter(resp, now)
		if ok != (tc.want > 0) || ok && until.Sub(now) != tc.want || !ok && !until.IsZero() {
			t.Errorf("RetryAfter(%d, %q) = %v, %v; want a wait of %v", tc.status, tc.value, until, ok, tc.want)
		}
	}
}

// challengingRobots challenges a robots.txt fetch, then serves the file to
// the answer, marked in its context as a signer marks it; it counts the
// pages it is sent.
type challengingRobots struct {
	pages  atomic.Int32
	cannot bool // the challenge cannot be answered
}

func (b *challengingRobots) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	switch {
	case r.URL.Path != "/robots.txt":
		b.pages.Add(1)
	case r.Context().Value(answerKey{}) == nil:
		resp.StatusCode = http.StatusUnauthorized
		resp.Header.Set("Accept-Signature", `sig2=("@method" "@authority" "@path")`)
	default:
		resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n"))
	}
	return resp, nil
}

func (b *challengingRobots) Answer(req *http.Request, resp *http.Response) (*http.Request, error) {
	switch {
	case resp.StatusCode != http.StatusUnauthorized:
		return nil, nil
	case b.cannot:
		return nil, errors.New("the challenge asks a key the signer has not")
	}
	return req.Clone(context.WithValue(req.Context(), answerKey{}, true)), nil
}

// TestRobotsFetchAnswersAChallenge: a site that challenges the robots.txt
// fetch (a signature asked) is decided by the file served to the answer:
// its challenge's 401 is no "unavailable" that allows everything.
func TestRobotsFetchAnswersAChallenge(t *testing.T) {
	base := &challengingRobots{}
	tr := NewTransport(base, Options{MinDelay: -1})
	err := sendFrom(tr, "http://site.example/private/x")
	if !errors.Is(err, ErrDisallowed) {
		t.Errorf("GET /private/x: %v; want it refused by the robots.txt behind the challenge", err)
	}
	if n := base.pages.Load(); n != 0 {
		t.Errorf("%d pages sent; want none", n)
	}
	if info, err := tr.Robots(context.Background(), "http://site.example/"); err != nil || info.Outcome != Parsed {
		t.Errorf("Robots = %+v, %v; want the file parsed", info, err)
	}

	// One it cannot answer is the fetch's response: a 401, unavailable.
	base = &challengingRobots{cannot: true}
	tr = NewTransport(base, Options{MinDelay: -1})
	if info, err := tr.Robots(context.Background(), "http://site.example/"); err != nil || info.Outcome != Unavailable || info.StatusCode != http.StatusUnauthorized {
		t.Errorf("Robots = %+v, %v; want the challenge's 401, unavailable", info, err)
	}
}

// TestGzipCutWithinTheLimit: however a compressed body is padded (empty
// deflate blocks, which cost raw bytes and decode to nothing), what is
// kept of it is whole lines within the limit, never the line that ends
// one byte past it.
func TestGzipCutWithinTheLimit(t *testing.T) {
	const limit = 84
	// A line ends at byte limit+1.
	line := strings.Repeat("a", 16) + "\n"
	text := strings.Repeat(line, (limit+1)/len(line)+2)
	for pad := range 40 {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.NoCompression)
		for range pad {
			zw.Flush() // an empty stored block
		}
		zw.Write([]byte(text))
		zw.Close()
		data, _, err := readLimited(&b, "gzip", limit)
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		// Whole lines: each ends within the kept text or just past it.
		whole := len(data) == 0 || data[len(data)-1] == '\n' || text[len(data)] == '\n'
		if len(data) > limit || !strings.HasPrefix(text, string(data)) || !whole {
			t.Errorf("pad %d: kept %d bytes ending %q; want whole lines within %d", pad, len(data), data[max(len(data)-1, 0):], limit)
		}
	}
}

// closeCounter is a body that counts into closed the first time it is
// closed.
type closeCounter struct {
	io.Reader
	once   atomic.Bool
	closed *atomic.Int32
}

func (c *closeCounter) Close() error {
	if c.once.CompareAndSwap(false, true) {
		c.closed.Add(1)
	}
	return nil
}

// TestLateFetchAnswerIsClosed: a robots.txt answer that comes as the
// fetch times out, from a base that does not watch its context, is
// closed whichever comes first, the answer or the timeout.
func TestLateFetchAnswerIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 5 * time.Millisecond
		var opened, closed atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(timeout) // as the deadline passes
			opened.Add(1)
			return &http.Response{StatusCode: http.StatusOK, Body: &closeCounter{Reader: strings.NewReader(allowAll), closed: &closed}, Request: r}, nil
		})
		tr := NewTransport(base, Options{MinDelay: -1, FetchTimeout: timeout})
		var wg sync.WaitGroup
		for i := range 300 {
			wg.Go(func() { tr.Check(context.Background(), fmt.Sprintf("http://o%d.example/", i)) })
		}
		wg.Wait()
		synctest.Wait()
		if o, c := opened.Load(), closed.Load(); o != c {
			t.Errorf("%d robots.txt answers, %d closed", o, c)
		}
	})
}
