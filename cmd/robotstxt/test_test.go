package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlkit/robots/internal/report"
)

// example is the policy most command tests read. Its lines:
//
//	 2-3   User-agent: *, Disallow: /
//	 5-9   User-agent: ExampleBot, Disallow: /private, Allow: /private/open,
//	       Disallow: /two words (warned: a space), Crawl-delay: 2
//	11-12  User-agent: ExampleBot-News, Disallow: (the allow-all: no warning)
const example = "../../testdata/cli/example.txt"

func TestTest(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{
			name: "a disallow names its rule, line and group, and no finding of a rule that cannot concern it",
			args: []string{"-robots", example, "-agent", "ExampleBot", "/private/x"},
			wantOut: []string{"DISALLOWED  /private/x\n" +
				"  by Disallow: /private (line 6) in the group for ExampleBot (lines 5-9)\n"},
		},
		{
			name: "an ignored rule's finding is listed under the URL it was meant for",
			args: []string{"-robots", example, "-agent", "ExampleBot", "/two%20words/x"},
			wantOut: []string{"ALLOWED     /two%20words/x\n" +
				"  no rule matched in the group for ExampleBot (lines 5-9)\n" +
				"  error: line 8: Disallow pattern \"/two words\" contains a space; ignored: write \"/two%20words\"\n"},
		},
		{
			name:    "the longer allow decides",
			args:    []string{"-robots", example, "-agent", "ExampleBot", "/private/open/a"},
			wantOut: []string{"ALLOWED     /private/open/a\n  by Allow: /private/open (line 7) in the group for ExampleBot (lines 5-9)\n"},
		},
		{
			name:    "no matching rule is said",
			args:    []string{"-robots", example, "-agent", "ExampleBot", "/public"},
			wantOut: []string{"ALLOWED     /public\n  no rule matched in the group for ExampleBot (lines 5-9)\n"},
		},
		{
			name:    "an unnamed crawler falls back to the * group",
			args:    []string{"-robots", example, "-agent", "OtherBot", "/x"},
			wantOut: []string{"DISALLOWED  /x\n  by Disallow: / (line 3) in the * group (lines 2-3), as no group names OtherBot\n"},
		},
		{
			name:    "the first token with a group decides",
			args:    []string{"-robots", example, "-agent", "ExampleBot-Image,ExampleBot", "/private"},
			wantOut: []string{"by Disallow: /private (line 6) in the group for ExampleBot (lines 5-9)"},
		},
		{
			name:    "repeated -agent flags keep their order",
			args:    []string{"-robots", example, "-agent", "ExampleBot-News", "-agent", "ExampleBot", "/private"},
			wantOut: []string{"ALLOWED     /private\n  no rule matched in the group for ExampleBot-News (lines 11-12)\n"},
		},
		{
			name:    "a full User-Agent is read as its product token",
			args:    []string{"-robots", example, "-agent", "ExampleBot/1.0 (+https://example.com/bot)", "/private"},
			wantOut: []string{"in the group for ExampleBot (lines 5-9)"},
			wantErr: []string{`read as its product token "ExampleBot"`},
		},
		{
			name:    "an absolute URL shows the path it matched as",
			args:    []string{"-robots", example, "-agent", "ExampleBot", "https://example.com:8443/private?x=1#top"},
			wantOut: []string{"DISALLOWED  https://example.com:8443/private?x=1#top  (matched as /private?x=1)\n"},
		},
		{
			name:    "robots.txt is always allowed",
			args:    []string{"-robots", example, "-agent", "OtherBot", "/robots.txt"},
			wantOut: []string{"ALLOWED     /robots.txt\n  /robots.txt is always allowed\n"},
		},
		{
			name:    "no group applies without a * group",
			stdin:   "User-agent: ExampleBot\nDisallow: /\n",
			args:    []string{"-robots", "-", "-agent", "OtherBot", "/x"},
			wantOut: []string{"ALLOWED     /x\n  no group names this crawler and there is no * group\n"},
		},
		{
			name:    "flags may follow the URLs",
			args:    []string{"/private", "-robots", example, "/public", "-agent", "ExampleBot"},
			wantOut: []string{"DISALLOWED  /private\n", "ALLOWED     /public\n"},
		},
		{
			name:    "-expect passes when every URL agrees",
			args:    []string{"-robots", example, "-agent", "ExampleBot", "-expect", "disallowed", "/private", "/private/x"},
			wantOut: []string{"DISALLOWED  /private\n", "DISALLOWED  /private/x\n"},
		},
		{
			name:       "-expect fails when a URL differs",
			args:       []string{"-robots", example, "-agent", "ExampleBot", "-expect", "disallowed", "/private", "/public"},
			wantStatus: 1,
			wantOut:    []string{"ALLOWED     /public\n  no rule matched in the group for ExampleBot (lines 5-9)\n  FAIL: expected disallowed\n"},
		},
		{
			name:       "a URL that is neither a path nor http(s) is bad usage; the others are still decided",
			args:       []string{"-robots", example, "-agent", "ExampleBot", "/private", "ftp://example.com/x", "/public"},
			wantStatus: 2,
			wantOut:    []string{"DISALLOWED  /private\n", "ALLOWED     /public\n"},
			wantErr:    []string{`"ftp://example.com/x"`, "not a path or an http(s) URL"},
		},
		{
			name:       "a URL that cannot be read keeps exit 2 when a later URL fails -expect",
			args:       []string{"-robots", example, "-agent", "ExampleBot", "-expect", "disallowed", "ftp://example.com/x", "/public"},
			wantStatus: 2,
			wantOut:    []string{"ALLOWED     /public\n", "FAIL: expected disallowed\n"},
			wantErr:    []string{`"ftp://example.com/x"`},
		},
		{
			name:       "-agent is required",
			args:       []string{"-robots", example, "/x"},
			wantStatus: 2,
			wantErr:    []string{"-agent TOKEN is required", "usage: robotstxt test"},
		},
		{
			name:       "-robots is required",
			args:       []string{"-agent", "ExampleBot", "/x"},
			wantStatus: 2,
			wantErr:    []string{"-robots FILE is required"},
		},
		{
			name:       "a URL is required",
			args:       []string{"-robots", example, "-agent", "ExampleBot"},
			wantStatus: 2,
			wantErr:    []string{"no URL to test"},
		},
		{
			name:       "a missing robots.txt is bad usage",
			args:       []string{"-robots", "../../testdata/cli/no-such-file.txt", "-agent", "ExampleBot", "/x"},
			wantStatus: 2,
			wantErr:    []string{"no-such-file.txt"},
		},
		{
			name:       "an unknown flag is bad usage",
			args:       []string{"-robots", example, "-agent", "ExampleBot", "-verbose", "/x"},
			wantStatus: 2,
			wantErr:    []string{"-verbose", "usage: robotstxt test"},
		},
		{
			name:       "-expect takes allowed or disallowed",
			args:       []string{"-robots", example, "-agent", "ExampleBot", "-expect", "yes", "/x"},
			wantStatus: 2,
			wantErr:    []string{`-expect is "yes"`},
		},
		{
			name:       "an agent without a product token is bad usage",
			args:       []string{"-robots", example, "-agent", "/1.0", "/x"},
			wantStatus: 2,
			wantErr:    []string{"no product token"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, tt.stdin, append([]string{"test"}, tt.args...)...)
			check(t, status, stdout, stderr, tt.wantStatus, tt.wantOut, tt.wantErr)
		})
	}
}

// TestTestWarnsOnce checks that a finding is printed once, under the
// first URL it concerns, however many URLs the group decides.
func TestTestWarnsOnce(t *testing.T) {
	status, stdout, stderr := runCLI(t, "", "test", "-robots", example, "-agent", "ExampleBot", "/private/x", "/two%20words/a", "/public", "/two%20words/b")
	if status != 0 || stderr != "" {
		t.Fatalf("exit status %d, stderr %q", status, stderr)
	}
	const warning = "  error: line 8: Disallow pattern \"/two words\" contains a space; ignored: write \"/two%20words\"\n"
	want := "DISALLOWED  /private/x\n  by Disallow: /private (line 6) in the group for ExampleBot (lines 5-9)\n" +
		"ALLOWED     /two%20words/a\n  no rule matched in the group for ExampleBot (lines 5-9)\n" + warning
	if strings.Count(stdout, warning) != 1 || !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout:\n%s\nwant the warning once, under the first URL:\n%s", stdout, want)
	}
}

// TestTestNotes checks that a note is printed as a note.
func TestTestNotes(t *testing.T) {
	status, stdout, _ := runCLI(t, "", "test", "-robots", "../../testdata/cli/notes.txt", "-agent", "ExampleBot", "/private")
	want := "  note: line 2: empty Disallow disallows nothing; the group's other rules decide\n"
	if status != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit status %d, stdout:\n%s\nwant %q", status, stdout, want)
	}
}

func TestTestJSON(t *testing.T) {
	status, stdout, stderr := runCLI(t, "", "test", "-json", "-robots", example, "-agent", "ExampleBot", "/private/x", "/public", "mailto:x")
	if status != 2 {
		t.Errorf("exit status %d, want 2 for the mailto: URL; stderr:\n%s", status, stderr)
	}
	var got []report.Decision
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array of decisions: %v\n%s", err, stdout)
	}
	if len(got) != 3 {
		t.Fatalf("got %d decisions, want 3", len(got))
	}
	t.Run("a rule decides", func(t *testing.T) {
		d := got[0]
		if d.URL != "/private/x" || d.Allowed || d.Token != "ExampleBot" {
			t.Errorf("got url %q allowed %v token %q, want /private/x, false, ExampleBot", d.URL, d.Allowed, d.Token)
		}
		if d.Rule == nil || *d.Rule != (report.Rule{Type: "disallow", Pattern: "/private", Line: 6}) {
			t.Errorf("rule %+v, want disallow /private on line 6", d.Rule)
		}
		if len(d.Groups) != 1 || d.Groups[0].Line != 5 || d.Groups[0].EndLine != 9 {
			t.Errorf("groups %+v, want lines 5-9", d.Groups)
		}
		if len(d.Warnings) != 0 {
			t.Errorf("warnings %+v, want none: line 8's pattern, /two words, cannot concern /private/x", d.Warnings)
		}
	})
	t.Run("no rule matches", func(t *testing.T) {
		if d := got[1]; !d.Allowed || d.Rule != nil || d.Error != "" {
			t.Errorf("got %+v, want allowed with no rule", d)
		}
	})
	t.Run("a bad URL carries its error", func(t *testing.T) {
		if d := got[2]; d.URL != "mailto:x" || !strings.Contains(d.Error, "not a path") {
			t.Errorf("got %+v, want the mailto: URL with its error", d)
		}
	})
}

// TestTestPreferences checks that each URL's AI usage preferences are
// printed with their lines, in text and in JSON, with the warnings of
// those lines, and that a file without such lines prints none.
func TestTestPreferences(t *testing.T) {
	const file = "../../testdata/cli/preferences.txt"
	status, stdout, _ := runCLI(t, "", "test", "-robots", file, "-agent", "bot", "/a", "/open/x", "/private")
	want := "ALLOWED     /a\n" +
		"  no rule matched in the * group (lines 3-6), as no group names bot\n" +
		"  train-ai=n by Content-Usage: train-ai=n (line 5)\n" +
		"  search=y by Content-Signal: search=yes (line 1)\n" +
		"  ai-input=unknown\n" +
		"ALLOWED     /open/x\n" +
		"  no rule matched in the * group (lines 3-6), as no group names bot\n" +
		"  train-ai=y by Content-Usage: /open/ train-ai=y, search=yes (line 6)\n" +
		"  search=y by Content-Signal: search=yes (line 1)\n" +
		"  ai-input=unknown\n" +
		// Line 6's note concerns the paths under /open/ alone.
		"  note: line 6: Content-Usage search=yes is an unknown preference; write search=y\n"
	if status != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("exit status %d, stdout:\n%s\nwant it to start with:\n%s", status, stdout, want)
	}
	if !strings.Contains(stdout, "DISALLOWED  /private\n  by Disallow: /private (line 4) in the * group (lines 3-6), as no group names bot\n  train-ai=unknown (disallowed, so no Content-Usage applies)\n  search=y by Content-Signal: search=yes (line 1)\n") {
		t.Errorf("disallowed URL:\n%s", stdout)
	}
	_, stdout, _ = runCLI(t, "", "test", "-json", "-robots", file, "-agent", "bot", "/a")
	var got []report.Decision
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("JSON %v: %s", err, stdout)
	}
	if p := got[0].Preferences; len(p) != 3 || p[0].Label != "train-ai" || p[0].Value != "n" || len(p[0].From) != 1 || p[0].From[0].Line != 5 || p[0].From[0].Source != "Content-Usage" {
		t.Errorf("JSON preferences = %+v", p)
	}
	_, stdout, _ = runCLI(t, "", "test", "-robots", example, "-agent", "ExampleBot", "/public")
	if strings.Contains(stdout, "train-ai") {
		t.Errorf("a file without preference lines printed some:\n%s", stdout)
	}
}

// TestTestListsWhatConcernsTheURL checks, on a real file, that a URL's
// report lists the findings of the rules that, read as their authors
// meant, could decide it, and not those of other rules of its groups
// (www.mathworks.com.txt repeats its rules under /de/, /fr/ and /en/).
func TestTestListsWhatConcernsTheURL(t *testing.T) {
	status, stdout, _ := runCLI(t, "", "test", "-robots", "../../testdata/robots-corpus/www.mathworks.com.txt", "-agent", "Googlebot",
		"/matlabcentral/answers/?s_tid=gn_mlc_ans_ans&page=2")
	if status != 0 {
		t.Fatalf("exit status %d", status)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	findings := lines[2:]
	want := `  error: line 214: Disallow pattern "/matlabcentral/answers/?s_tid=gn_mlc_ans_ans&amp;*" holds the HTML entity "&amp;"`
	if len(findings) != 1 || !strings.HasPrefix(findings[0], want) {
		t.Errorf("findings:\n%s\nwant only line 214's, the rule meant to block the URL", strings.Join(findings, "\n"))
	}
}

// TestTestLongPath checks that a long percent-encoded path is shown
// decoded beside its encoded form, and that a deciding pattern that
// repeats it is not printed again.
func TestTestLongPath(t *testing.T) {
	const path = "/directadmission/document/result_mnst/0_%E0%B8%9B%E0%B8%A3%E0%B8%B0%E0%B8%81%E0%B8%B2%E0%B8%A8%E0%B8%82%E0%B9%89%E0%B8%AD%E0%B9%80%E0%B8%82%E0%B8%B5%E0%B8%A2%E0%B8%99%E0%B8%8A%E0%B8%99%E0%B8%9A%E0%B8%97.pdf"
	status, stdout, _ := runCLI(t, "", "test", "-robots", "../../testdata/robots-corpus/www.mahidol.ac.th.txt", "-agent", "Googlebot", path)
	want := "DISALLOWED  " + path + "\n" +
		"  decoded: /directadmission/document/result_mnst/0_\u0e1b\u0e23\u0e30\u0e01\u0e32\u0e28\u0e02\u0e49\u0e2d\u0e40\u0e02\u0e35\u0e22\u0e19\u0e0a\u0e19\u0e1a\u0e17.pdf\n" +
		"  by Disallow: the path above (line 1047) in the * group (lines 1-1078), as no group names Googlebot\n"
	if status != 0 || stdout != want {
		t.Errorf("exit status %d, stdout:\n%s\nwant:\n%s", status, stdout, want)
	}
	if strings.Count(stdout, path) != 1 {
		t.Errorf("the path is printed %d times, want once", strings.Count(stdout, path))
	}
}

// TestDecoded checks when a URL is shown decoded: three escapes or more
// that decode to printable UTF-8 text.
func TestDecoded(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"/%E0%B8%9B", "/\u0e1b", true},
		{"/%E0%B8", "", false},       // two escapes
		{"/%E0%B8%9B%E0", "", false}, // not UTF-8 once decoded
		{"/a%0Ab%0Ac%0A", "", false}, // control characters
		{"/a%2Fb%2Fc%2F", "/a/b/c/", true},
		{"/a%zz%20%20", "", false}, // a bad escape
	} {
		got, ok := decoded(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decoded(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTestPatternOnce checks when a deciding pattern is not printed
// again: from longPattern octets on, when the URL repeats it.
func TestTestPatternOnce(t *testing.T) {
	at := "/" + strings.Repeat("a", longPattern-1) // longPattern octets
	short := at[:longPattern-2]                    // with its "x", one octet short
	file := "User-agent: *\nDisallow: " + at + "\nDisallow: " + short + "x\n"
	for _, tc := range []struct {
		url, want string
	}{
		{at, "by Disallow: the path above (line 2)"},
		{"https://site.example" + at, "by Disallow: the path above (line 2)"},
		{short + "x", "by Disallow: " + short + "x (line 3)"},
		// Only contained in the URL: a longer path, which it prefixes.
		{at + "/more?q=1", "by Disallow: " + at + " (line 2)"},
		{"https://site.example" + at + "/more", "by Disallow: " + at + " (line 2)"},
	} {
		_, stdout, _ := runCLI(t, file, "test", "-robots", "-", "-agent", "a", tc.url)
		if !strings.Contains(stdout, tc.want) {
			t.Errorf("%s:\n%s\nwant %q", tc.url, stdout, tc.want)
		}
	}
}
