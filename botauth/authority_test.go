package botauth

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAuthority checks "@authority" as RFC 9421 section 2.2.3 derives it:
// lowercased, the scheme's default port dropped, any other port kept, the
// Host override preferred to the URL's host.
func TestAuthority(t *testing.T) {
	tests := []struct {
		url, host, want string
	}{
		{"https://Example.COM/", "", "example.com"},
		{"https://example.com:443/", "", "example.com"},
		{"http://example.com:80/", "", "example.com"},
		{"http://example.com:443/", "", "example.com:443"},
		{"https://example.com:8443/", "", "example.com:8443"},
		{"https://[::1]:443/", "", "[::1]"},
		{"http://[::1]:8080/", "", "[::1]:8080"},
		{"http://127.0.0.1/", "Site.Example", "site.example"},
		// As net/http sends the Host: punycode, whatever the port.
		{"https://Bücher.example/", "", "xn--bcher-kva.example"},
		{"https://Bücher.example:443/", "", "xn--bcher-kva.example"},
		{"https://bücher.example:8443/", "", "xn--bcher-kva.example:8443"},
		// Without an IPv6 zone, which net/http does not send.
		{"http://[fe80::1%25en0]:8080/", "", "[fe80::1]:8080"},
		{"http://[::1%25lo]/", "", "[::1]"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", tt.url, nil)
		req.Host = tt.host
		if tt.host == "" {
			req.Host = req.URL.Host
		}
		if got, err := authority(req); err != nil || got != tt.want {
			t.Errorf("authority(%s, Host %q) = %q, %v; want %q", tt.url, tt.host, got, err, tt.want)
		}
	}
}

// TestNormalPath checks "@path" as RFC 9421 section 2.2.6 normalises it
// and as WHATWG URL readers (Cloudflare's verifier) derive it: dot
// segments removed, "%2e" in any case read as a dot, every other escape
// and empty segment kept as sent.
func TestNormalPath(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://s.example", "/"},
		{"http://s.example/", "/"},
		{"http://s.example/a/b.html", "/a/b.html"},
		{"http://s.example/docs/./a", "/docs/a"},
		{"http://s.example/docs/../b", "/b"},
		{"http://s.example/docs/%2e%2e/c", "/c"},
		{"http://s.example/docs/%2E/d", "/docs/d"},
		{"http://s.example/a/.%2E/b", "/b"},
		{"http://s.example/../../x", "/x"},
		{"http://s.example/a/.", "/a/"},
		{"http://s.example/a/..", "/"},
		{"http://s.example/a/...", "/a/..."},
		{"http://s.example/a/.b/..c", "/a/.b/..c"},
		{"http://s.example//x/./y", "//x/y"},
		{"http://s.example/a%2Fb/./%7E", "/a%2Fb/%7E"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", tt.url, nil)
		if got := normalPath(req.URL); got != tt.want {
			t.Errorf("normalPath(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestParseAcceptSignatureRefuses holds the RFC 9651 and RFC 9421 rules
// a field breaks beside its members: a trailing comma, and a component
// asked twice, which no signature may cover.
func TestParseAcceptSignatureRefuses(t *testing.T) {
	for _, field := range []string{
		`sig2=("@method"),`,
		`sig2=("@method"), `,
		`sig2=("@method" "@path" "@method")`,
		`sig2=("signature-agent";key="a" "signature-agent";key="a")`,
	} {
		if _, err := parseAcceptSignature(field); err == nil {
			t.Errorf("parseAcceptSignature(%s) took it", field)
		}
	}
	if got, err := parseAcceptSignature(`sig2=("signature-agent";key="a" "signature-agent";key="b")`); err != nil || len(got[0].components) != 2 {
		t.Errorf("two members of one field: %v, %v; want both asked", got, err)
	}
}

// TestChallengeErrorQuotesAShortField: a site's 8 KiB field is kept
// whole in AcceptSignature, and its message quotes the start of it.
func TestChallengeErrorQuotesAShortField(t *testing.T) {
	field := `sig2=("@method"` + strings.Repeat(` "x-a"`, 1300) + `)`
	e := &ChallengeError{AcceptSignature: field, Reason: "why"}
	if msg := e.Error(); len(msg) > 400 || !strings.HasPrefix(msg, `botauth: signature challenge (0, Accept-Signature: sig2=("@method"`) || !strings.HasSuffix(msg, "not answered: why") {
		t.Errorf("Error() is %d bytes: %.120q...; want the field's start and the reason", len(msg), msg)
	}
}
