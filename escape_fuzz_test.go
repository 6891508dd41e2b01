package robots_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// oneSpelling reports whether the matching model makes the raw and the
// percent-encoded spelling of the ASCII byte c one and the same, in a
// pattern and in a URL: unreserved characters (their escapes are decoded),
// and the characters that may not appear raw in a URI, controls and space
// included (the raw form is sent encoded). Every other escape differs from
// its character by design ("%2F" is not "/").
func oneSpelling(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-._~\"<>\\^`{|} ", c) >= 0 || c < 0x20 || c == 0x7f
}

// rawInPattern reports whether c can be written raw in a Disallow line
// and still mean itself: not a line end, "#" (a comment), "*" or "$"
// (wildcard and anchor), nor a space or control, which make the line one
// that parsers ignore.
func rawInPattern(c byte) bool {
	return c > ' ' && c < 0x7f && c != '#' && c != '*' && c != '$'
}

// escapeSite serves a robots.txt that a test can change, and 200 for
// every other path.
type escapeSite struct {
	// mu protects robots.
	mu     sync.Mutex
	robots string
}

func (s *escapeSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		s.mu.Lock()
		defer s.mu.Unlock()
		io.WriteString(w, s.robots)
		return
	}
	io.WriteString(w, "ok")
}

// sendAllowed sends a GET for the path and query uri through a new
// Transport and reports whether robots.txt let it through. uri is given to
// url.Parse as a crawler would; when that refuses it (a control character,
// a "%" that starts no escape), the URL is built from its parts, as a
// crawler holding a decoded path would, and net/http escapes it.
func sendAllowed(t *testing.T, srv *httptest.Server, uri string) bool {
	t.Helper()
	u, err := url.Parse(srv.URL + uri)
	if err != nil {
		base, _ := url.Parse(srv.URL)
		path, query, _ := strings.Cut(uri, "?")
		u = &url.URL{Scheme: base.Scheme, Host: base.Host, Path: path, RawQuery: query}
	}
	client := &http.Client{Transport: robots.NewTransport(srv.Client().Transport, robots.Options{
		UserAgent: "EscapeBot/1.0",
		MinDelay:  -1,
	})}
	resp, err := client.Do(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}})
	if errors.Is(err, robots.ErrDisallowed) {
		return false
	}
	if err != nil {
		t.Fatalf("GET %q: %v", u, err)
	}
	resp.Body.Close()
	return true
}

// FuzzEscapeSpellings checks, for any ASCII byte c, that the policy and
// the transport's request path decide /p<c>q alike whether the robots.txt
// pattern and the URL spell c raw or as %HH (in either hex case), and
// that for the bytes whose spellings the matching model makes one, every spelling
// is refused by every spelling of the rule. The seeds, run by go test,
// are every ASCII byte.
func FuzzEscapeSpellings(f *testing.F) {
	for c := range 0x80 {
		f.Add(byte(c))
	}
	site := &escapeSite{}
	srv := httptest.NewServer(site)
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, c byte) {
		c &= 0x7f
		enc := []string{fmt.Sprintf("%%%02X", c), fmt.Sprintf("%%%02x", c)}
		patterns := []string{"/p" + enc[0] + "q", "/p" + enc[1] + "q"}
		if rawInPattern(c) {
			patterns = append(patterns, "/p"+string(c)+"q")
		}
		uris := []string{"/p" + enc[0] + "q", "/p" + enc[1] + "q", "/p" + string(c) + "q"}
		for _, pat := range patterns {
			body := "User-agent: *\nDisallow: " + pat + "\n"
			r := policy.Parse([]byte(body))
			site.mu.Lock()
			site.robots = body
			site.mu.Unlock()
			for _, uri := range uris {
				byPolicy := r.Allowed(uri, "EscapeBot")
				if bySend := sendAllowed(t, srv, uri); bySend != byPolicy {
					t.Errorf("Disallow: %q, URL %q: policy allowed=%v, transport allowed=%v", pat, uri, byPolicy, bySend)
				}
				if oneSpelling(c) && byPolicy {
					t.Errorf("Disallow: %q allows %q; the spellings of %q are one", pat, uri, c)
				}
			}
		}
	})
}
