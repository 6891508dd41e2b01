package norm

import "testing"

// TestLower checks that only ASCII letters fold.
func TestLower(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"googlebot", "googlebot"},
		{"Googlebot-News", "googlebot-news"},
		{"ÜBOT", "Übot"},
		{"MJ12BOT_X", "mj12bot_x"},
	} {
		if got := Lower(tc.in); got != tc.want {
			t.Errorf("Lower(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(AppendLower([]byte("x"), tc.in)); got != "x"+tc.want {
			t.Errorf("AppendLower(x, %q) = %q, want %q", tc.in, got, "x"+tc.want)
		}
	}
}

// TestLowerDoesNotAllocate checks that a lower-case string is returned as
// it is.
func TestLowerDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Lower("googlebot-news") }); n != 0 {
		t.Errorf("Lower allocates %v times", n)
	}
}
