package robots

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/target"
)

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

// TestCanonicalHostTakesTheCanonical checks the fast path both ways: a
// URL spelt as canonicalOrigin spells it skips it, and one spelt otherwise
// does not (FuzzOrigin holds the first to canonicalOrigin's answer).
func TestCanonicalHostTakesTheCanonical(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://example.com/":           true,
		"http://a-z.0-9.example:8080/":   true,
		"http://192.0.2.1:1/":            true,
		"https://xn--bcher-kva.example/": true,
		"http://Example.com/":            false,
		"http://a_b.example/":            false,
		"http://example.com.:8080/":      false,
		"http://example.com:80/":         false,
		"https://example.com:443/":       false,
		"http://example.com:080/":        false,
		"http://example.com:65536/":      false,
		"http://[2001:db8::1]:8080/":     false,
		"http://example.com:/":           false,
		"https://b\u00fccher.example/":   false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalHost(u); got != want {
			t.Errorf("canonicalHost(%s) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzOrigin checks that originOf never panics and that an origin it
// returns parses back as a URL with the same origin.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"http://Bücher.example:80/", "https://[::1]:443/x", "http://[fe80::1%25en0]/", "http://a.example:0/", "http://%25",
		"http://a.example:8080/", "https://a.example:443/", "http://a.example:080/", "http://a.example:99999/", "http://a.example:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || !isHTTP(u.Scheme) {
			return
		}
		host, err := canonicalOrigin(u)
		if canonicalHost(u) && (err != nil || u.Host != host) {
			t.Fatalf("fast origin of %q is %q, canonicalOrigin gives %q, %v", raw, u.Host, host, err)
		}
		if err != nil {
			return
		}
		o := originID{https: strings.EqualFold(u.Scheme, "https"), host: host}.key()
		back, err := url.Parse(string(o))
		if err != nil {
			t.Fatalf("origin %q of %q does not parse: %v", o, raw, err)
		}
		if again, err := canonicalOrigin(back); err != nil || again != host {
			t.Fatalf("origin %q of %q is %q, %v the second time", host, raw, again, err)
		}
	})
}

// TestOneOriginPerHost checks that the spellings of one host that reach
// one server (an IPv6 address written in full or compressed, an
// IPv4-mapped address and its IPv4 form, an internationalised name that
// the lookup profile maps to ASCII) are one origin: one robots.txt fetch,
// one pace, and every request sent with the Host whose robots.txt was
// read, whatever spelling net/http would have sent.
func TestOneOriginPerHost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		urls     []string
		robots   string // the one robots.txt fetched
		wantHost string // the Host every page request carries
	}{
		{"IPv6 compressed and in full", []string{"http://[::1]/a", "http://[0:0:0:0:0:0:0:1]/b", "http://[0::1]:80/c"}, "http://[::1]/robots.txt", "[::1]"},
		{"IPv6 upper case and with port", []string{"http://[2001:DB8::1]:8080/a", "http://[2001:db8:0:0::1]:8080/b"}, "http://[2001:db8::1]:8080/robots.txt", "[2001:db8::1]:8080"},
		{"IPv4-mapped", []string{"http://[::ffff:127.0.0.1]/a", "http://127.0.0.1/b", "http://[::FFFF:7f00:1]/c"}, "http://127.0.0.1/robots.txt", "127.0.0.1"},
		{"full-width name", []string{"http://\uff48.example/a", "http://h.example/b"}, "http://h.example/robots.txt", "h.example"},
		{"ideographic full stop", []string{"http://h\u3002example/a", "http://H.example./b"}, "http://h.example/robots.txt", "h.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var robots, hosts []string
			base := rtFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				if r.URL.Path == "/robots.txt" {
					robots = append(robots, r.URL.String())
				} else {
					hosts = append(hosts, r.Host)
				}
				mu.Unlock()
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n")), Request: r}, nil
			})
			c := newClock()
			tr := NewTransport(base, Options{MinDelay: time.Hour, Now: c.Now, Sleep: c.Sleep})
			for _, u := range tc.urls {
				req, err := http.NewRequest(http.MethodGet, u, nil)
				if err != nil {
					t.Fatal(err)
				}
				host := req.Host
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("%s: %v", u, err)
				}
				resp.Body.Close()
				if req.Host != host {
					t.Errorf("%s: the caller's request now has Host %q, not %q: RoundTrip must send a clone", u, req.Host, host)
				}
				// One pace: the next spelling is due an hour after this
				// request, whichever spelling it is.
				for _, other := range tc.urls {
					at, err := tr.NextFree(context.Background(), other)
					if err != nil {
						t.Fatalf("NextFree(%s): %v", other, err)
					}
					if want := c.Now().Add(time.Hour); at.Before(want) {
						t.Errorf("after %s, NextFree(%s) = %v, want %v: its own pace", u, other, at.Sub(c.Now()), time.Hour)
					}
				}
			}
			if want := []string{tc.robots}; !slices.Equal(robots, want) {
				t.Errorf("robots.txt fetched %q, want %q", robots, want)
			}
			for i, h := range hosts {
				if h != tc.wantHost {
					t.Errorf("%s sent with Host %q, want %q: the host whose robots.txt was read", tc.urls[i], h, tc.wantHost)
				}
			}
			if len(hosts) != len(tc.urls) {
				t.Errorf("%d pages sent, want %d", len(hosts), len(tc.urls))
			}
		})
	}
}

// TestToolsDecideTheTargetSent: the path and query the command, the
// explorer and release checks match for an absolute URL (target.Target)
// are those the transport decides and net/http sends, over generated
// URLs mixing escapes Go keeps with raw octets that make it escape the
// path anew.
func TestToolsDecideTheTargetSent(t *testing.T) {
	parts := []string{"a", "/", "%2F", "%2f", "%3B", "%3D", ";", "=", "|", "{", " ", "\u00e9", "\u30c4", "%C3%A9", "%7E", "~", "..", ".", "%25", "?", "?q=%2F", "&", "+", "%20"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		b.WriteString("http://s.example/")
		for range 1 + rng.IntN(6) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		raw := b.String()
		u, err := url.Parse(raw)
		if err != nil {
			continue // not sendable
		}
		tg, err := targetFor(u, "")
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		got, err := target.Target(raw)
		if err != nil || got != tg.uri {
			t.Fatalf("target.Target(%q) = %q, %v; the transport decides %q", raw, got, err, tg.uri)
		}
	}
}
