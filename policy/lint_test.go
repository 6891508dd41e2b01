package policy

import (
	"strings"
	"testing"
)

// TestSeverities checks that each kind of finding has its level: errors
// for lines that cannot be what their author meant, warnings for input a
// crawler may read differently, notes for readings every crawler shares.
func TestSeverities(t *testing.T) {
	tests := []struct {
		name string
		file string // the finding is on its last line
		want Severity
	}{
		{"a rule before any group is an error", "Disallow: /x", SeverityError},
		{"a pattern with a space is an error", "User-agent: *\nDisallow: /a b", SeverityError},
		{"a pattern with a bad escape is an error", "User-agent: *\nDisallow: /a%zz", SeverityError},
		{"a pattern without a leading slash is an error", "User-agent: *\nDisallow: a", SeverityError},
		{"a misspelt User-agent is an error", "User-agnet: BadBot", SeverityError},
		{"a misspelt Disallow no crawler reads is an error", "User-agent: *\nDisallw: /x", SeverityError},
		{"a misspelling read as meant is a warning", "User-agent: *\nDissalow: /x", SeverityWarning},
		{"a line without a colon read as meant is a warning", "User-agent: *\nDisallow /x", SeverityWarning},
		{"a field outside RFC 9309 is a warning", "User-agent: *\nNoindex: /x", SeverityWarning},
		{"an unknown field far from any is a warning", "User-agent: *\nFrobnicate: yes", SeverityWarning},
		{"a Crawl-delay that is no number is a warning", "User-agent: *\nCrawl-delay: soon", SeverityWarning},
		{"a relative Sitemap is a warning", "Sitemap: /sitemap.xml", SeverityWarning},
		{"a User-agent without a product token is a warning", "User-agent: ü-bot", SeverityWarning},
		{"a User-agent read by its product token is a note", "User-agent: Googlebot/2.1", SeverityNote},
		{"an empty Allow is a note", "User-agent: *\nAllow:", SeverityNote},
		{"a pattern with an HTML entity is an error", "User-agent: *\nDisallow: /a?b=1&amp;c=2", SeverityError},
		{"a numeric HTML entity cut by its # is an error", "User-agent: *\nDisallow: /a?b=1&#38;c=2", SeverityError},
		{"a Sitemap with an HTML entity is a warning", "Sitemap: https://site.example/s.xml?a=1&amp;b=2", SeverityWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.file))
			last := strings.Count(tt.file, "\n") + 1
			var got []Warning
			for _, w := range r.Warnings() {
				if w.Line == last {
					got = append(got, w)
				}
			}
			if len(got) != 1 || got[0].Severity != tt.want {
				t.Errorf("findings on line %d: %v, want one %s", last, got, tt.want)
			}
		})
	}
}

// TestFixHints checks that each finding with an obvious fix says it.
func TestFixHints(t *testing.T) {
	tests := []struct {
		name string
		file string // the finding is on its last line
		want []string
	}{
		{"a space is written %20", "User-agent: *\nDisallow: /my private/dir", []string{`write "/my%20private/dir"`}},
		{"a stray percent is written %25", "User-agent: *\nDisallow: /100%", []string{`write "/100%25"`}},
		{"a pattern without a slash gets one", "User-agent: *\nDisallow: private", []string{`write "/private"`}},
		{"a full URL is cut to its path", "User-agent: *\nDisallow: https://site.example/private?x=1", []string{`write "/private?x=1"`}},
		{"a full URL keeps its path's escapes", "User-agent: *\nDisallow: https://site.example/my private/a%2Fb%3F", []string{`write "/my%20private/a%2Fb%3F"`}},
		{
			"a misspelt User-agent before any group says its rules belong to none",
			"User-agnet: BadBot",
			[]string{`"User-agnet" is probably User-agent misspelt`, "crawlers ignore the line", "belong to none", "write User-agent"},
		},
		{
			"a misspelt User-agent after rules says which group its rules join",
			"User-agent: *\nDisallow: /tmp\n\nUser-agnet: BadBot",
			[]string{`probably User-agent misspelt`, "join the group of line 1 (User-agent: *)"},
		},
		{
			"a misspelt User-agent in a run of them says which name the group lacks",
			"User-agent: a\nUser-agnet: BadBot",
			[]string{`the group of line 1 does not name "BadBot"`},
		},
		{"a swap of two letters is a typo", "User-agent: *\nDisalolw: /x", []string{"probably Disallow misspelt", "the rule Disallow: /x does not apply"}},
		{"a misspelt Content-Usage is a typo", "User-agent: *\nContentUsage: train-ai=n", []string{"probably Content-Usage misspelt", "preferences it states do not apply", "write Content-Usage"}},
		{"a misspelt Content-Signal is a typo", "User-agent: *\nContent-Signals: ai-train=no", []string{"probably Content-Signal misspelt", "write Content-Signal"}},
		{"a misspelt Sitemap is not read", "Sitemaps: https://site.example/s.xml", []string{"probably Sitemap misspelt", "the sitemap is not read"}},
		{"a misspelt Crawl-delay is not applied", "User-agent: *\nCrawl-dely: 5", []string{"probably Crawl-delay misspelt", "no Crawl-delay applies"}},
		{
			"the rules of a misspelt User-agent say why they have no group",
			"User-agnet: BadBot\nDisallow: /",
			[]string{"Disallow before any User-agent line; ignored", "it would join the group of line 1 if that line were spelt User-agent"},
		},
		{
			"a misspelt User-agent without a colon is the typo it is",
			"User-agent: *\nDisallow: /tmp\nUser-agnet BadBot",
			[]string{"probably User-agent misspelt", "join the group of line 1", "write User-agent: BadBot"},
		},
		{"a stray rule without a typo says how to give it a group", "Allow: /x", []string{"put a User-agent line above it (User-agent: * for every crawler)"}},

		{"an &amp; is written &", "User-agent: *\nDisallow: /answers/?s_tid=gn&amp;*", []string{`holds the HTML entity "&amp;"`, `write "/answers/?s_tid=gn&*"`}},
		{"an entity ending the pattern", "User-agent: *\nDisallow: /a&amp;", []string{`write "/a&"`}},
		{"a four-octet entity ending the pattern", "User-agent: *\nDisallow: /a&GT;", []string{`write "/a>"`}},
		{"an entity after an & that starts none", "User-agent: *\nDisallow: /a&b=1&&amp;c", []string{`write "/a&b=1&&c"`}},
		{"every entity is decoded", "User-agent: *\nAllow: /a&lt;b&GT;c&quot;d&apos;e&amp;f", []string{`holds the HTML entity "&lt;"`, `write "/a<b>c\"d'e&f"`}},
		{"a fix for a space decodes the entity too", "User-agent: *\nDisallow: /a b&amp;c", []string{"contains a space", `write "/a%20b&c"`}},
		{"a numeric entity cut by a comment", "User-agent: *\nDisallow: /a?b&#38;c&#x26;d # old", []string{`the "#" of the HTML entity "&#38;" starts a comment`, `crawlers read only "Disallow: /a?b&"`, `write "Disallow: /a?b&c&d # old"`}},
		{"a numeric entity of seven digits", "User-agent: *\nDisallow: /a&#0000038;b", []string{`write "Disallow: /a&b"`}},
		{"a hexadecimal entity of six digits", "User-agent: *\nDisallow: /a&#x000026;b", []string{`write "Disallow: /a&b"`}},
		{"the last code point", "User-agent: *\nDisallow: /a&#x10FFFF;", []string{`write "Disallow: /a\U0010ffff"`}},
		{"a one-digit numeric entity", "User-agent: *\nDisallow: /a&#9;b", []string{`write "Disallow: /a\tb"`}},
		{"a Sitemap's entity is decoded", "Sitemap: https://site.example/s.xml?a=1&amp;b=2", []string{`holds the HTML entity "&amp;"`, `write "https://site.example/s.xml?a=1&b=2"`}},
		{"a relative Sitemap's absolute form is decoded too", "Sitemap: /s.xml?a=1&amp;b=2", []string{`write "/s.xml?a=1&b=2"`, `such as "https://example.com/s.xml?a=1&b=2"`}},
		{"an entity escaped twice is decoded to the character", "User-agent: *\nDisallow: /two&amp;amp;x", []string{`holds the HTML entity "&amp;"`, `write "/two&x"`}},
		{"a relative sitemap is given in full", "Sitemap: /sitemap.xml", []string{"is relative", `absolute URL, such as "https://example.com/sitemap.xml"`}},
		{"Noindex says what to use instead", "User-agent: *\nNoindex: /x", []string{"noindex robots meta tag or X-Robots-Tag header"}},
		{"a URL alone is offered as a sitemap", "User-agent: *\nHTTPS://site.example/s.xml", []string{`write "Sitemap: HTTPS://site.example/s.xml"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.file))
			last := strings.Count(tt.file, "\n") + 1
			var msg string
			for _, w := range r.Warnings() {
				if w.Line == last {
					msg += w.Message
				}
			}
			for _, frag := range tt.want {
				if !strings.Contains(msg, frag) {
					t.Errorf("line %d: %q, want it to contain %q", last, msg, frag)
				}
			}
		})
	}
}

// TestLintFoldsASCIIOnly checks that lint reads a field name as RFC 9309
// does, folding A-Z alone: a "httpſ:" line (a long s, which Unicode folds
// to "s") is no URL alone.
func TestLintFoldsASCIIOnly(t *testing.T) {
	for _, w := range Parse([]byte("User-agent: *\nhttp\u017f://site.example/s.xml")).Warnings() {
		if strings.Contains(w.Message, "a URL alone") {
			t.Errorf("line %d: %q; a long s is no s", w.Line, w.Message)
		}
	}
}

// TestStrayRuleNamesGroup checks that a rule before any group names the
// first group, which it would join if moved down, and that a file with
// no group gets no such hint.
func TestStrayRuleNamesGroup(t *testing.T) {
	r := Parse([]byte("Disallow: /early\nAllow: /e\n\nUser-agent: a\nUser-agent: b\nDisallow: /x\n\nUser-agent: c\nDisallow: /y\n"))
	ws := r.Warnings()
	if len(ws) != 2 {
		t.Fatalf("warnings %v, want the two stray rules", ws)
	}
	for _, w := range ws {
		if !strings.HasSuffix(w.Message, "or move it into the group of line 4 (User-agent: a, b)") || w.Severity != SeverityError {
			t.Errorf("%s, want an error naming the group of line 4", w)
		}
	}
	open := Parse([]byte("Disallow: /early\nUser-agent: a\n"))
	if ws := open.Warnings(); len(ws) != 1 || !strings.HasSuffix(ws[0].Message, "the group of line 2 (User-agent: a)") {
		t.Errorf("with the first group still open: %v", ws)
	}
	none := Parse([]byte("Disallow: /early\n"))
	if ws := none.Warnings(); len(ws) != 1 || strings.Contains(ws[0].Message, "move it") {
		t.Errorf("without a group: %v, want no group named", ws)
	}
}

// TestNearField checks which names count as misspellings of a field.
func TestNearField(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{"User-agnet", "User-agent"},
		{"Usr-agent", "User-agent"},
		{"USER_AGNET", "User-agent"},
		{"Disallw", "Disallow"},
		{"Disalow-x", ""},
		{"Alow", "Allow"},
		{"Allw", "Allow"},
		{"Crawl-deley", "Crawl-delay"},
		{"Siteamp", "Sitemap"},
		{"Frobnicate", ""},
		{"Host", ""},
		{"http", ""},
		{"Below", ""}, // two edits from Allow, which has only five letters
		{"Request-rate", ""},
		{strings.Repeat("user-agent", 5), ""},
	}
	for _, tt := range tests {
		if got, _ := nearField(tt.key); got != tt.want {
			t.Errorf("nearField(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

// TestNoEntityNoFinding checks that an ampersand that starts no HTML
// character reference (no semicolon, an unknown name, a number out of
// range or a comment that is no number) is read without a finding.
func TestNoEntityNoFinding(t *testing.T) {
	for _, line := range []string{
		"Disallow: /a?b=1&c=2",
		"Disallow: /a?b=1&amp",
		"Disallow: /a?b=1&ampc=2",
		"Disallow: /a?b=1&copy;",
		"Disallow: /a?b=1&#0;",
		"Disallow: /a?b=1&#1114112;",
		"Disallow: /a?b=1&#xD800;",
		"Disallow: /a?b=1&#xDFFF;",
		"Disallow: /a?b=1&#00000038;",
		"Disallow: /a?b=1&#x0000026;",
		"Disallow: /a?b=1&#;",
		"Disallow: /a?b=1& # a comment",
		"Disallow: /a?b=1&#comment",
		"Sitemap: https://site.example/s.xml?a=1&b=2",
	} {
		if w := Parse([]byte("User-agent: *\n" + line)).Warnings(); len(w) != 0 {
			t.Errorf("%s: %v, want no finding", line, w)
		}
	}
}

// TestConcerns checks which paths a finding concerns: a finding on a
// rule's pattern, the paths the pattern as its author meant it could
// match; any other finding, every path.
func TestConcerns(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /a b\nDisallow: /q?x=1&amp;*\nDisallow: *.pdf&amp;\nDisallw: /typo\nNoindex: /n\nDisallow: shop\nContent-Usage: /open/ search=yes\nContent-Usage: /a&amp;b Train-AI=n\n"))
	at := map[int]Warning{}
	for _, w := range r.Warnings() {
		at[w.Line] = w
	}
	for _, tc := range []struct {
		line int
		path string
		want bool
	}{
		{2, "/a%20b/c", true},
		{2, "/a", false},
		{2, "/b", false},
		{2, "/x/a%20b", false}, // the literal must start the path
		{3, "/q?x=1&y=2", true},
		{3, "/q?y=2", false},
		{4, "/any/doc.pdf&", true}, // a pattern that starts with a wildcard
		{4, "/any/thing", false},   // matched as meant, wildcards and all
		{3, "/q?x=1", false},
		{5, "/typo", true},
		{5, "/other", false},
		{6, "/anything", true}, // not a rule's finding
		{7, "/shop/x", true},   // read as meant: /shop
		{7, "/other", false},
		{8, "/open/x", true}, // a Content-Usage line's path
		{8, "/a", false},
		{9, "/a&amp;b/x", true}, // a Content-Usage path matches as written
		{9, "/a&b", false},
	} {
		w, ok := at[tc.line]
		if !ok {
			t.Fatalf("no finding on line %d: %v", tc.line, r.Warnings())
		}
		if got := r.Concerns(w, tc.path); got != tc.want {
			t.Errorf("line %d (%s) concerns %s: %v, want %v", tc.line, w.Message, tc.path, got, tc.want)
		}
	}
}
