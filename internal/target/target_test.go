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
	}
	for _, tt := range tests {
		got, err := Target(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Target(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "a/b", "ftp://e.example/", "http:///x", "mailto:x@y"} {
		if _, err := Target(bad); !errors.Is(err, ErrTarget) {
			t.Errorf("Target(%q) error = %v, want ErrTarget", bad, err)
		}
	}
}
