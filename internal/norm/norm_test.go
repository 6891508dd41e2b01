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

// TestEqualFold checks that only ASCII letters fold, and that strings of
// other lengths differ.
func TestEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"Googlebot", "googleBOT", true},
		{"googlebot", "googlebot-news", false},
		{"googlebot-news", "googlebot", false},
		{"ÜBOT", "Übot", true},
		{"üBOT", "Übot", false},
		{"a@", "A`", false}, // "@" and "`" are "A" and "a" less one
		{"z[", "Z{", false}, // "[" and "{" are "Z" and "z" plus one
		{"mj12bot", "MJ12BOT", true},
	} {
		if got := EqualFold(tc.a, tc.b); got != tc.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEqualLower checks field names in any case against their lower-case
// spelling, word by word and octet by octet.
func TestEqualLower(t *testing.T) {
	for _, tc := range []struct {
		s, lower string
		want     bool
	}{
		{"allow", "allow", true},
		{"ALLOW", "allow", true},
		{"aLLow", "allow", true},
		{"alloW", "allow", true},
		{"allov", "allow", false},
		{"User-Agent", "user-agent", true},
		{"USER-AGENT", "user-agent", true},
		{"user_agent", "user-agent", false},
		{"User-Agenu", "user-agent", false},
		{"Usor-Agent", "user-agent", false},
		{"DISALLOW", "disallow", true},
		{"Disallou", "disallow", false},
		{"Crawl-Delay", "crawl-delay", true},
		{"Content-Signal", "content-signal", true},
		{"Content-SignaL", "content-signal", true},
		{"Content-Signam", "content-signal", false},
	} {
		if got := EqualLower(tc.s, tc.lower); got != tc.want {
			t.Errorf("EqualLower(%q, %q) = %v, want %v", tc.s, tc.lower, got, tc.want)
		}
	}
	if FoldedWord("DisAllow") != Word("disallow") {
		t.Error(`FoldedWord("DisAllow") is not Word("disallow")`)
	}
}
