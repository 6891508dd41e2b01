package robots

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

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

// TestHostOverrideKeptApart checks that a Host override's robots.txt is
// fetched with that Host from the URL's address and kept apart from the
// address's own, and that a Host net/http would rewrite is refused.
func TestHostOverrideKeptApart(t *testing.T) {
	s := newSite(t, hostRobots)
	tr := newTestTransport(t, newClock(), Options{})
	if _, err := get(t, tr, s.URL+"/victim-only/page"); err != nil {
		t.Fatalf("own site: %v", err)
	}
	for _, host := range []string{"victim.example", "VICTIM.example:80"} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/victim-only/page", nil)
		req.Host = host
		if _, err := tr.RoundTrip(req); !errors.Is(err, ErrDisallowed) {
			t.Errorf("Host %q: RoundTrip = %v, want ErrDisallowed", host, err)
		}
	}
	if _, err := get(t, tr, s.URL+"/victim-only/again"); err != nil {
		t.Errorf("own site after the override: %v", err)
	}
	if got := s.robotsHits.Load(); got != 2 {
		t.Errorf("%d robots.txt fetches, want 2 (one per site)", got)
	}
	for _, host := range []string{"bücher.example", "victim.example/x", "a b", "user@victim.example"} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/page", nil)
		req.Host = host
		if _, err := tr.RoundTrip(req); !errors.Is(err, errBadHost) {
			t.Errorf("Host %q: RoundTrip = %v, want errBadHost", host, err)
		}
	}
}

// FuzzTarget checks that whatever the URL and Host, targetFor does not
// panic and gives consistent results: a request-URI, and an origin key
// whose robots.txt is fetched from the URL's own address.
func FuzzTarget(f *testing.F) {
	f.Add("http://a.example/public//../private/secret?q=1", "")
	f.Add("http://10.0.0.1:8080/x", "victim.example")
	f.Add("http:%2F%2Fa.example/p", "")
	f.Add("http://[fe80::1%25en0]:8080/x", "")
	f.Add("https://[fe80::1%25eth0]/x", "victim.example")
	f.Fuzz(func(t *testing.T, raw, host string) {
		u, err := url.Parse(raw)
		if err != nil || !isHTTP(u.Scheme) {
			return
		}
		tg, err := targetFor(u, host)
		if err != nil {
			return
		}
		if tg.uri == "" {
			t.Fatalf("%q: empty request-URI", raw)
		}
		key := string(tg.id.key())
		if strings.Count(key, "|") > 1 {
			t.Fatalf("%q: key %q", raw, key)
		}
		// The robots.txt is fetched from the address the request is sent
		// to, whatever site it names.
		robotsURL, vhost := tg.id.robotsURL()
		dial, err := identify(u, "")
		if err != nil {
			t.Fatalf("%q: key %q: identify: %v", raw, key, err)
		}
		want, _ := url.Parse(string(dial.key()) + "/robots.txt")
		if robotsURL.String() != want.String() || robotsURL.Host != want.Host || strings.Contains(key, "|") != (vhost != "") {
			t.Fatalf("%q: key %q gives %q (host %q), Host %q; want %q (host %q)", raw, key, robotsURL, robotsURL.Host, vhost, want, want.Host)
		}
	})
}
