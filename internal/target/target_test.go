package target

import (
	"errors"
	"testing"
)

// TestTarget checks how URLs become the path and query that is matched.
func TestTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/a?b", "/a?b"},
		{"//x", "//x"},
		{"/a#f", "/a"},
		{"http://e.example", "/"},
		{"HTTPS://e.example:8443/p?q#f", "/p?q"},
		{"HTTP://e.example/p", "/p"},
		{"Http://e.example", "/"},
		{"hTtPs://e.example/a%2Fb", "/a%2Fb"},
		{"http://e.example?q=1", "/?q=1"},
		{"http://e.example#f", "/"},
		// As net/http sends them: escaped anew where Go does not keep
		// the path's escaping.
		{"http://s.example/a%3Bb|c", "/a;b%7Cc"},
		{"http://s.example/\u00e9/a%3Bb", "/%C3%A9/a;b"},
		{"http://s.example/a%2Fb/\u30c4?q=\u00e9", "/a/b/%E3%83%84?q=\u00e9"},
		{"http://s.example/a%2Fb?q", "/a%2Fb?q"},
		{"http://s.example/a?", "/a?"},
	}
	for _, tt := range tests {
		got, err := Target(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Target(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	// The URLs Go cannot read, which the transport refuses unsent, too.
	for _, bad := range []string{"", "a/b", "ftp://e.example/", "http:///x", "mailto:x@y",
		"http://s.example/%zz", "http://[::1/private/x", "http://a b/private/x", "http://host:port/private/x"} {
		if _, err := Target(bad); !errors.Is(err, ErrTarget) {
			t.Errorf("Target(%q) error = %v, want ErrTarget", bad, err)
		}
	}
}
