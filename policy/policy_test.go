package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGroups checks group formation and selection, RFC 9309 section 2.2.1.
func TestGroups(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		tokens []string
		path   string
		want   bool
	}{
		{"consecutive user-agents share a group",
			"User-agent: a\nUser-agent: b\nDisallow: /x\n", []string{"b"}, "/x", false},
		{"user-agent after a rule starts a group",
			"User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n", []string{"a"}, "/y", true},
		{"blank lines do not end a group",
			"User-agent: a\n\n\nUser-agent: b\n\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"sitemap does not end a group",
			"User-agent: a\nSitemap: https://e.example/s.xml\nUser-agent: b\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"unknown line does not end a group",
			"User-agent: a\nFoo: bar\nUser-agent: b\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"* then a tab and a comment is the * group",
			"User-agent: *\t(everyone else)\nDisallow: /x\n", []string{"other"}, "/x", false},
		{"* then a space and a comment is the * group",
			"User-agent: * (everyone else)\nDisallow: /x\n", []string{"other"}, "/x", false},
		{"groups naming a token merge",
			"User-agent: a\nDisallow: /x\n\nUser-agent: *\nDisallow: /z\n\nUser-agent: a\nDisallow: /y\n", []string{"a"}, "/y", false},
		{"merged groups do not take the star group",
			"User-agent: a\nDisallow: /x\n\nUser-agent: *\nDisallow: /z\n", []string{"a"}, "/z", true},
		{"token matches case-insensitively",
			"User-agent: ExampleBot\nDisallow: /\n", []string{"EXAMPLEBOT"}, "/a", false},
		{"token matches exactly, not by prefix",
			"User-agent: googlebot-news\nDisallow: /\n", []string{"googlebot"}, "/a", true},
		{"star applies when no group names the token",
			"User-agent: *\nDisallow: /\n", []string{"other"}, "/a", false},
		{"named group with no rules still wins",
			"User-agent: *\nDisallow: /\n\nUser-agent: a\nDisallow:\n", []string{"a"}, "/a", true},
		{"first token with a group wins",
			"User-agent: googlebot\nDisallow: /a\n\nUser-agent: googlebot-image\nDisallow: /b\n", []string{"googlebot-image", "googlebot"}, "/a", true},
		{"later token used when first has no group",
			"User-agent: googlebot\nDisallow: /a\n", []string{"googlebot-image", "googlebot"}, "/a", false},
		{"versioned user-agent read by its token",
			"User-agent: Googlebot/2.1\nDisallow: /v\n", []string{"googlebot"}, "/v", false},
		{"no groups at all",
			"# nothing\n", []string{"a"}, "/", true},
		{"crawl-delay does not end a run of user-agents",
			"User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"malformed crawl-delay does not end a run of user-agents",
			"User-agent: a\nCrawl-delay: soon\nUser-agent: b\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"user-agent without a product token starts a group of its own",
			"User-agent: Googlebot\nDisallow: /private\nUser-agent: ü-bot\nDisallow: /\n", []string{"googlebot"}, "/x", true},
		{"user-agent without a product token matches no crawler",
			"User-agent: *bot\nDisallow: /\n", []string{"bot"}, "/x", true},
		{"empty user-agent joins the run and matches no crawler",
			"User-agent:\nUser-agent: a\nDisallow: /x\n", []string{"a"}, "/x", false},
		{"star followed by a comment is the star group",
			"User-agent: Googlebot\nDisallow: /private\nUser-agent: * (everyone else)\nDisallow: /\n", []string{"other"}, "/x", false},
		{"star followed by a comment leaves the named group alone",
			"User-agent: Googlebot\nDisallow: /private\nUser-agent: * (everyone else)\nDisallow: /\n", []string{"googlebot"}, "/x", true},
		{"rules before any user-agent ignored",
			"Disallow: /\nUser-agent: a\nAllow: /x\n", []string{"a"}, "/y", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.file))
			if got := r.Decide(tt.path, tt.tokens...).Allowed; got != tt.want {
				t.Errorf("Decide(%q, %q) allowed = %v, want %v", tt.path, tt.tokens, got, tt.want)
			}
			if got := r.Allowed(tt.path, tt.tokens...); got != tt.want {
				t.Errorf("Allowed(%q, %q) = %v, want %v", tt.path, tt.tokens, got, tt.want)
			}
		})
	}
}

// TestLineSyntax checks RFC 9309 section 2.2: line ends, comments,
// whitespace, field-name case and the lenient readings docs/matching.md lists.
func TestLineSyntax(t *testing.T) {
	tests := []struct {
		name, file, path string
		want             bool
	}{
		{"LF", "User-agent: *\nDisallow: /x\n", "/x", false},
		{"CRLF", "User-agent: *\r\nDisallow: /x\r\n", "/x", false},
		{"CR only", "User-agent: *\rDisallow: /x\r", "/x", false},
		{"no final newline", "User-agent: *\nDisallow: /x", "/x", false},
		{"BOM skipped", "\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", "/x", false},
		{"comment after a rule", "User-agent: *\nDisallow: /x # why\n", "/x", false},
		{"comment cuts the pattern", "User-agent: *\nDisallow: /x#y\n", "/xz", false},
		{"field names in any case", "USER-AGENT: *\nDISALLOW: /x\n", "/x", false},
		{"spaces around the colon", "User-agent :*\nDisallow\t:\t/x\n", "/x", false},
		{"misspelled disallow read as meant", "User-agent: *\nDissallow: /x\n", "/x", false},
		{"user agent with a space read as meant", "User agent: *\nDisallow: /x\n", "/x", false},
		{"empty disallow ignored", "User-agent: *\nDisallow:\n", "/x", true},
		{"pattern with a space ignored", "User-agent: *\nDisallow: /two words\n", "/two", true},
		{"pattern with a bad escape ignored", "User-agent: *\nDisallow: /bad%zz\n", "/bad", true},
		{"pattern without a slash ignored", "User-agent: *\nDisallow: x\n", "/x", true},
		{"unicode space is a path character", "User-agent: *\nDisallow: /a\u00a0\n", "/a", true},
		{"field and value without a colon read as meant", "User-agent: *\nDisallow /x\n", "/x", false},
		{"user-agent without a colon read as meant", "User-agent *\nDisallow: /x\n", "/x", false},
		{"misspelling without a colon read as meant", "User-agent: *\nDissallow\t/x\n", "/x", false},
		{"three words without a colon ignored", "User-agent: *\nDisallow /x /y\n", "/x", true},
		{"unknown field without a colon ignored", "User-agent: *\nForbid /x\n", "/x", true},
		{"one word without a colon ignored", "User-agent: *\nDisallow/x\n", "/x", true},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "/robots.txt", true},
		{"robots.txt with escapes", "User-agent: *\nDisallow: /\n", "/%72obots.txt", true},
		{"robots.txt is case-sensitive", "User-agent: *\nDisallow: /\n", "/Robots.txt", false},
		{"robots.txt with a query always allowed", "User-agent: *\nDisallow: /\n", "/robots.txt?x=1", true},
		{"robots.txt as a prefix is not", "User-agent: *\nDisallow: /\n", "/robots.txt.bak", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse([]byte(tt.file)).Allowed(tt.path, "bot"); got != tt.want {
				t.Errorf("Allowed(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestWarnings checks that every ignored or leniently read line is
// reported on its line.
func TestWarnings(t *testing.T) {
	file := strings.Join([]string{
		"Disallow: /early",          // 1
		"User-agent: *",             // 2
		"Disallow:",                 // 3
		"Disallow: /two words",      // 4
		"Disallow: /bad%zz",         // 5
		"Disallow: nope",            // 6
		"Noindex: /x",               // 7
		"Frobnicate: yes",           // 8
		"Dissallow: /typo",          // 9
		"User-agent: Googlebot/2.1", // 10
		"Crawl-delay: soon",         // 11
		"just text",                 // 12
		"Sitemap:",                  // 13
		"Disallow: /fine",           // 14
		"user-agent bot4",           // 15
		"Disallow /x",               // 16
		"User-agent: ü-bot",         // 17
		"User-agent:",               // 18
		"User-agent: * all others",  // 19
		"Disallow /x /y",            // 20
		`Disallow: say"hi"`,         // 21
		`Disallow: back\slash`,      // 22
	}, "\n")
	r := Parse([]byte(file))
	want := map[int]string{
		1: "before any User-agent", 3: "empty Disallow", 4: "contains a space",
		5: "% not followed", 6: "neither", 7: "not part of RFC 9309",
		8: "unknown field", 9: `read as "disallow"`, 10: "product token",
		11: "not a number", 12: "no colon", 13: "empty Sitemap",
		15: `no colon: "user-agent bot4" read as "user-agent: bot4"`,
		16: `no colon: "Disallow /x" read as "disallow: /x"`,
		17: "no product token", 18: "empty User-agent", 19: `read as "*"`,
		20: "no colon",
		21: `pattern "say\"hi\"" starts with neither`, 22: `pattern "back\\slash" starts with neither`,
	}
	got := map[int]string{}
	for _, w := range r.Warnings() {
		got[w.Line] += w.Message
	}
	for line, frag := range want {
		if !strings.Contains(got[line], frag) {
			t.Errorf("line %d: warning %q, want one containing %q", line, got[line], frag)
		}
	}
	for line, msg := range got {
		if _, ok := want[line]; !ok {
			t.Errorf("unexpected warning on line %d: %s", line, msg)
		}
	}
}

// TestDecideExplains checks the explanation: rule, line, token, groups.
func TestDecideExplains(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /\n\nUser-agent: a\nUser-agent: b\nAllow: /pub\nDisallow: /pub/secret\n"))
	d := r.Decide("/pub/secret/x", "B")
	if d.Allowed || !d.Matched || d.Rule.Line != 7 || d.Rule.Pattern != "/pub/secret" || d.Rule.Allow {
		t.Errorf("decision = %+v, want disallowed by line 7", d)
	}
	if d.Token != "B" || len(d.Groups) != 1 || r.Groups()[d.Groups[0]].Line != 4 {
		t.Errorf("token %q groups %v, want B and the group on line 4", d.Token, d.Groups)
	}
	if want := "disallowed by Disallow: /pub/secret (line 7)"; d.String() != want {
		t.Errorf("String() = %q, want %q", d.String(), want)
	}
	d = r.Decide("/x", "other")
	if d.Token != "*" || d.Rule.Line != 2 {
		t.Errorf("fallback decision = %+v, want * and line 2", d)
	}
	d = Parse(nil).Decide("/x", "a")
	if !d.Allowed || d.Matched || d.String() != "allowed: no group names this crawler and there is no * group" {
		t.Errorf("empty file decision = %+v (%s)", d, d)
	}
	d = Parse([]byte("User-agent: a\nDisallow: /x\n")).Decide("/y", "a")
	if d.String() != "allowed: no rule matched" {
		t.Errorf("no match String() = %q", d.String())
	}
}

// TestCrawlDelayAndSitemaps checks the non-rule records.
func TestCrawlDelayAndSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: https://e.example/a.xml\nUser-agent: a\nCrawl-delay: 4\nDisallow: /\n\nUser-agent: a\nCrawl-delay: 2.5\nDisallow: /y\n\nUser-agent: *\nDisallow: /x\nSitemap: https://e.example/b.xml\n"))
	if d, ok := r.CrawlDelay("a"); !ok || d != 4*time.Second {
		t.Errorf("CrawlDelay(a) = %v, %v; want the larger merged delay 4s", d, ok)
	}
	if _, ok := r.CrawlDelay("other"); ok {
		t.Error("CrawlDelay(other) reported a delay; the * group has none")
	}
	if got := fmt.Sprint(r.Sitemaps()); got != "[https://e.example/a.xml https://e.example/b.xml]" {
		t.Errorf("Sitemaps() = %s", got)
	}
	// RFC 9309 section 2.2.4: the Crawl-delay does not split a and b, so
	// both get it; of several in one group the largest holds.
	r = Parse([]byte("User-agent: a\nCrawl-delay: 5\nCrawl-delay: 7\nCrawl-delay: 1\nUser-agent: b\nDisallow: /x\n"))
	for _, tok := range []string{"a", "b"} {
		if d, ok := r.CrawlDelay(tok); !ok || d != 7*time.Second {
			t.Errorf("CrawlDelay(%s) = %v, %v; want the group's largest, 7s", tok, d, ok)
		}
	}
}

// TestTruncate checks the RFC 9309 section 2.5 size limit: content past the
// limit is dropped with the partial last line, and a file of exactly the
// limit is kept whole, its last line too when no newline ends it.
func TestTruncate(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"a\nb\n", 10, "a\nb\n"},
		{"line1\nline2\n", 8, "line1\n"},
		{"line1\r\nline2", 8, "line1\r\n"},
		{"line1\rline2", 8, "line1\r"},
		{"longline", 4, ""},
		{"a\nbc", 4, "a\nbc"},
		{"a\nbc\n", 5, "a\nbc\n"},
		{"a\nbcd", 4, "a\n"},
		// A line whole within the limit, its line end just past it.
		{"a\nbc\nd", 4, "a\nbc"},
		{"a\nbc\r\nd", 4, "a\nbc"},
		{"a\nbc\rd", 4, "a\nbc"},
	}
	for _, tt := range tests {
		if got := string(Truncate([]byte(tt.in), tt.limit)); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

// TestAllowedDoesNotAllocate checks the hot path.
func TestAllowedDoesNotAllocate(t *testing.T) {
	r := Parse([]byte("User-agent: ExampleBot\nDisallow: /private\nAllow: /private/open\nDisallow: /*.php$\n\nUser-agent: *\nDisallow: /\n"))
	for _, path := range []string{"/private/x", "/a.php", "/caf%c3%a9?q=1", "/.well-known/x", "/a/.hidden", "/a%2Fb", "/a%2F.hidden", "/caf%C3%A9%2F%2E%2E.x"} {
		for _, token := range []string{"ExampleBot", "Other"} {
			if n := testing.AllocsPerRun(100, func() { r.Allowed(path, token) }); n != 0 {
				t.Errorf("Allowed(%q, %q) allocates %v times", path, token, n)
			}
		}
	}
}

// TestDecideAllocations checks that Decide, which the transport calls on
// every request, allocates nothing for an already normalised path.
func TestDecideAllocations(t *testing.T) {
	r := Parse([]byte("User-agent: a\nDisallow: /private\n"))
	if n := testing.AllocsPerRun(100, func() { r.Decide("/private/x?y=1", "a", "b") }); n != 0 {
		t.Errorf("Decide allocates %v times", n)
	}
	if d := r.Decide("/caf%c3%a9", "a"); d.Path != "/caf%C3%A9" {
		t.Errorf("Path = %q, want the normalised path", d.Path)
	}
}

// TestAllowedAllocationBound checks the documented bound: no allocation
// for printable ASCII paths up to 2,048 bytes, short or long, once the
// file's token index and rule index are built.
func TestAllowedAllocationBound(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /*.pdf$\n"))
	for range scanLookups + indexAfter + 1 {
		r.Allowed("/", "bot")
	}
	for _, n := range []int{10, 42, 43, 128, 129, 256, 257, 2048} {
		path := "/" + strings.Repeat("a/b", n)[:n-1]
		if got := testing.AllocsPerRun(20, func() { r.Allowed(path, "bot") }); got != 0 {
			t.Errorf("Allowed on a %d-byte path allocates %v times", len(path), got)
		}
	}
	// A short path has a buffer for every octet escaped.
	for _, n := range []int{42, 43, 64, 85} {
		path := "/" + strings.Repeat("\xe9", n-1)
		if got := testing.AllocsPerRun(20, func() { r.Allowed(path, "bot") }); got != 0 {
			t.Errorf("Allowed on a %d-byte path, every octet escaped, allocates %v times", len(path), got)
		}
	}
}

// TestDecideResolves checks that a request is refused when a form that
// servers serve for it is (docs/matching.md), that the
// explanation names that form, and that the literal reading does not.
func TestDecideResolves(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\n"))
	tests := []struct {
		uri, resolved string
		allowed       bool
	}{
		{"/public/../private/x", "/private/x", false},
		{"/public/%2e%2E/private", "/private", false},
		{"//private/x", "/private/x", false},
		{"/a//..//private", "/private", false},
		{"/a/.//../private", "/private", false},
		{"/public/./x", "", true},
		{"/private/../public", "", false},
		{"/a/b?q=/../private", "", true},
		{"/public/..%2fprivate/secret.txt", "/private/secret.txt", false},
		{"/public/%2e%2e%2Fprivate", "/private", false},
		{"/public%2f..%2fprivate", "/private", false},
		{"/public/..%2f%2fprivate", "/private", false},
		{"/public/.%2fprivate", "", true},
		{"/public%2Fprivate", "", true},
		{"/a?q=..%2f..%2fprivate", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			d := r.Decide(tt.uri, "bot")
			if d.Allowed != tt.allowed || d.Resolved != tt.resolved {
				t.Errorf("Decide = %+v, want allowed=%v resolved=%q", d, tt.allowed, tt.resolved)
			}
			if got := r.Allowed(tt.uri, "bot"); got != tt.allowed {
				t.Errorf("Allowed = %v, want %v", got, tt.allowed)
			}
			literal := !strings.HasPrefix(tt.uri, "/private")
			if got := r.Agent("bot").AllowedLiteral(tt.uri); got != literal {
				t.Errorf("AllowedLiteral = %v, want %v", got, literal)
			}
		})
	}
}

// TestCrawlDelayCapped checks that a huge Crawl-delay is capped, with a
// warning, rather than dropped (a dropped delay would mean no delay), and
// that only plain decimal numbers are read.
func TestCrawlDelayCapped(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
		warns int
	}{
		{"2.5", 2500 * time.Millisecond, true, 0},
		{"1000000", maxCrawlDelay * time.Second, true, 0},
		{"2000000", maxCrawlDelay * time.Second, true, 1},
		{"1" + strings.Repeat("0", 400), maxCrawlDelay * time.Second, true, 1},
		{"Inf", 0, false, 1},
		{"NaN", 0, false, 1},
		{"-1", 0, false, 1},
		{"1e3", 0, false, 1},
		{"0x10", 0, false, 1},
		{".", 0, false, 1},
	} {
		r := Parse([]byte("User-agent: *\nCrawl-delay: " + tc.value + "\n"))
		d, ok := r.CrawlDelay("bot")
		if d != tc.want || ok != tc.ok {
			t.Errorf("Crawl-delay: %.20s gives %v, %v; want %v, %v", tc.value, d, ok, tc.want, tc.ok)
		}
		if got := len(r.Warnings()); got != tc.warns {
			t.Errorf("Crawl-delay: %.20s: %d warnings %v; want %d", tc.value, got, r.Warnings(), tc.warns)
		}
	}
}
