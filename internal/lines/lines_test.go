package lines

import "testing"

// TestComplete checks the line ends RFC 9309 section 2.2 allows.
func TestComplete(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"no line end", ""},
		{"a\nb", "a\n"},
		{"a\r\nb", "a\r\n"},
		{"a\rb", "a\r"},
		{"a\nb\n", "a\nb\n"},
		{"a\r", "a\r"},
	} {
		if got := string(Complete([]byte(tc.in))); got != tc.want {
			t.Errorf("Complete(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
