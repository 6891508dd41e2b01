package robots

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

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
