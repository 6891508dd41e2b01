package policy

import (
	"strings"
	"testing"
)

// TestResolveDots checks dot-segment removal (RFC 3986 section 5.2.4).
func TestResolveDots(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/a/b/../c", "/a/c"},
		{"/a/..", "/"},
		{"/..", "/"},
		{"/a/./b/.", "/a/b/"},
		{"/a/%2E%2e/b?q=/../x", "/b?q=/../x"},
		{"/a/b", ""},
		{"/a/...", ""},
		{"*", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ResolveDots(tc.in)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("ResolveDots = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

// FuzzResolveDots checks that a resolved path starts with "/" and has no
// dot segment left, in any spelling.
func FuzzResolveDots(f *testing.F) {
	for _, s := range []string{"/a/../b", "/%2e%2E/x?y", "/./", "/a/b/..", "/..%2f/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		got, ok := ResolveDots(uri)
		if !ok {
			return
		}
		path, _, _ := strings.Cut(got, "?")
		if !strings.HasPrefix(path, "/") {
			t.Fatalf("ResolveDots(%q) = %q, not a path", uri, got)
		}
		for _, seg := range strings.Split(path[1:], "/") {
			if dotSegment(seg) != "" {
				t.Fatalf("ResolveDots(%q) = %q keeps dot segment %q", uri, got, seg)
			}
		}
	})
}

// TestDecideRequest checks that a dot-segment path is refused when its
// resolved form is, and that the explanation names the resolved path.
func TestDecideRequest(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\n"))
	tests := []struct {
		uri, resolved string
		allowed       bool
	}{
		{"/public/../private/x", "/private/x", false},
		{"/public/%2e%2E/private", "/private", false},
		{"/public/./x", "", true},
		{"/private/../public", "", false},
		{"/a/b", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			d := r.DecideRequest(tt.uri, "bot")
			if d.Allowed != tt.allowed || d.Resolved != tt.resolved {
				t.Errorf("DecideRequest = %+v, want allowed=%v resolved=%q", d, tt.allowed, tt.resolved)
			}
		})
	}
}
