package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/robots/internal/diff"
	"github.com/crawlkit/robots/policy"
)

// writeFile writes data into a new file called name and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffKinds checks diff on each kind of change a release makes, with
// the URLs and crawlers it finds by itself: each change is listed with
// the deciding line of each file, nothing else is, and a change fails.
func TestDiffKinds(t *testing.T) {
	const base = "User-agent: *\nDisallow: /private\n\nUser-agent: BadBot\nUser-agent: OtherBot\nDisallow: /\n"
	tests := []struct {
		name, old, new string
		want           []string // the heads of the changes, in order
		wantLines      []string // the deciding lines printed
	}{
		{
			name: "rule added",
			old:  base,
			new:  "User-agent: *\nDisallow: /private\nDisallow: /tmp\n\nUser-agent: BadBot\nUser-agent: OtherBot\nDisallow: /\n",
			want: []string{
				"/tmp for *: allowed, now disallowed",
				"/tmp/x for *: allowed, now disallowed",
				"/tmp?x=1 for *: allowed, now disallowed",
				"/tmpx for *: allowed, now disallowed",
			},
			wantLines: []string{"OLD: allowed: no rule matched", "NEW:3: disallowed by Disallow: /tmp (line 3)"},
		},
		{
			name: "rule removed",
			old:  "User-agent: *\nDisallow: /private\nDisallow: /tmp\n\nUser-agent: BadBot\nUser-agent: OtherBot\nDisallow: /\n",
			new:  base,
			want: []string{
				"/tmp for *: disallowed, now allowed",
				"/tmp/x for *: disallowed, now allowed",
				"/tmp?x=1 for *: disallowed, now allowed",
				"/tmpx for *: disallowed, now allowed",
			},
			wantLines: []string{"OLD:3: disallowed by Disallow: /tmp (line 3)", "NEW: allowed: no rule matched"},
		},
		{
			name: "rule narrowed to a directory",
			old:  base,
			new:  "User-agent: *\nDisallow: /private/\n\nUser-agent: BadBot\nUser-agent: OtherBot\nDisallow: /\n",
			want: []string{
				"/private for *: disallowed, now allowed",
				"/private?x=1 for *: disallowed, now allowed",
				"/privatex for *: disallowed, now allowed",
			},
		},
		{
			name: "group split",
			old:  base,
			new:  "User-agent: *\nDisallow: /private\n\nUser-agent: BadBot\nDisallow: /\n\nUser-agent: OtherBot\nDisallow: /private\n",
			want: []string{
				"/ for OtherBot: disallowed, now allowed",
				"/?x=1 for OtherBot: disallowed, now allowed",
				"/Private for OtherBot: disallowed, now allowed",
				"/x for OtherBot: disallowed, now allowed",
			},
			wantLines: []string{"OLD:6: disallowed by Disallow: / (line 6)", "NEW: allowed: no rule matched"},
		},
		{
			name: "agent renamed",
			old:  base,
			new:  "User-agent: *\nDisallow: /private\n\nUser-agent: BadBot\nUser-agent: OtherBot2\nDisallow: /\n",
			want: []string{
				"/ for OtherBot: disallowed, now allowed",
				"/ for OtherBot2: allowed, now disallowed",
				"/?x=1 for OtherBot: disallowed, now allowed",
				"/?x=1 for OtherBot2: allowed, now disallowed",
				"/Private for OtherBot: disallowed, now allowed",
				"/Private for OtherBot2: allowed, now disallowed",
				"/x for OtherBot: disallowed, now allowed",
				"/x for OtherBot2: allowed, now disallowed",
			},
			wantLines: []string{"OLD: allowed: no rule matched", "NEW:6: disallowed by Disallow: / (line 6)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, nu := writeFile(t, "old.txt", tt.old), writeFile(t, "new.txt", tt.new)
			status, stdout, stderr := runCLI(t, "", "diff", old, nu)
			if status != 1 || stderr != "" {
				t.Errorf("exit status %d, stderr %q; want 1 for a change", status, stderr)
			}
			var heads []string
			for _, line := range strings.Split(stdout, "\n") {
				if strings.Contains(line, ", now ") && !strings.HasPrefix(line, " ") {
					heads = append(heads, line)
				}
			}
			if strings.Join(heads, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s\nfull output:\n%s", strings.Join(heads, "\n"), strings.Join(tt.want, "\n"), stdout)
			}
			out := strings.NewReplacer(old, "OLD", nu, "NEW").Replace(stdout)
			for _, l := range tt.wantLines {
				if !strings.Contains(out, "\n  "+l+"\n") {
					t.Errorf("output lacks the line %q:\n%s", l, out)
				}
			}
			o, n := policy.Parse([]byte(tt.old)), policy.Parse([]byte(tt.new))
			if !strings.HasSuffix(stdout, " changed ("+plural(len(diff.URLs(o, n)), "URL")+", "+plural(len(diff.Agents(o, n)), "crawler")+")\n") {
				t.Errorf("last line %q", lastLine(stdout))
			}
		})
	}
}

// TestDiffEveryForm checks that diff decides a URL in every form a
// server serves, as the transport does: adding Disallow: /private
// changes /public/../private and its other spellings, and the change
// fails a deploy gate.
func TestDiffEveryForm(t *testing.T) {
	old := writeFile(t, "old.txt", "User-agent: *\nAllow: /public\n")
	nu := writeFile(t, "new.txt", "User-agent: *\nAllow: /public\nDisallow: /private\n")
	spellings := []string{"/public/../private", "/public/%2e%2e/private", "//private", "/public//../private", "/public/..%2fprivate"}
	status, stdout, stderr := runCLI(t, "", append([]string{"diff", "-agent", "ExampleBot", old, nu}, spellings...)...)
	want := []string{"5 of 5 decisions changed"}
	for _, u := range spellings {
		want = append(want, u+" for ExampleBot: allowed, now disallowed")
	}
	check(t, status, stdout, stderr, 1, want, nil)
	if !strings.Contains(stdout, "disallowed by Disallow: /private (line 3) once the path is resolved as servers do: /private") {
		t.Errorf("the form decided is not named:\n%s", stdout)
	}
}

// TestDiffJSONNoChange checks that diff -json gives no change as an
// empty list, which a script can iterate, never as null.
func TestDiffJSONNoChange(t *testing.T) {
	f := writeFile(t, "robots.txt", "User-agent: *\nDisallow: /a\n")
	status, stdout, stderr := runCLI(t, "", "diff", "-json", f, f, "/a", "/b")
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || status != 0 || stderr != "" {
		t.Fatalf("diff -json: status %d, %v, stderr %q\n%s", status, err, stderr, stdout)
	}
	if string(got["changes"]) != "[]" {
		t.Errorf("changes = %s, want []", got["changes"])
	}
}

// TestDiffRefusesPastTheLimit: a file naming many crawlers, each with
// rules, would make millions of decisions, each change held until it is
// printed: past diff.MaxDecisions diff refuses at once, naming the way
// out, and a named crawler brings it within.
func TestDiffRefusesPastTheLimit(t *testing.T) {
	var b strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&b, "User-agent: bot%d\nDisallow: /p%d\n\n", i, i)
	}
	old := writeFile(t, "old.txt", b.String())
	nu := writeFile(t, "new.txt", "User-agent: *\nDisallow: /\n")
	status, stdout, stderr := runCLI(t, "", "diff", old, nu)
	if status != 2 || stdout != "" || !strings.Contains(stderr, "the limit is 1000000: name the crawlers (-agent) or the URLs") {
		t.Errorf("diff of 1,201 crawlers: status %d, stdout %d bytes, stderr %q; want 2 and the limit named", status, len(stdout), stderr)
	}
	if status, _, stderr := runCLI(t, "", "diff", "-agent", "bot7", old, nu); status != 1 {
		t.Errorf("diff -agent bot7: status %d, stderr %q; want 1, the decisions changed", status, stderr)
	}
}

// TestDiff checks diff's inputs and outputs: given crawlers and URLs,
// the URLs file, JSON, no change, and bad usage.
func TestDiff(t *testing.T) {
	old := writeFile(t, "old.txt", "User-agent: *\nDisallow: /a\n\nUser-agent: ExampleBot\nDisallow: /b\n")
	nu := writeFile(t, "new.txt", "User-agent: *\nDisallow: /a\nDisallow: /c\n\nUser-agent: ExampleBot\nDisallow: /b\nDisallow: /c\n")
	urls := writeFile(t, "urls.txt", "# URLs to check\n/c/1\n\nhttps://site.example/b\n")
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{"the same file changes nothing", "", []string{old, old}, 0, []string{"0 of "}, nil},
		{"URLs given after the files", "", []string{old, nu, "/c/x", "/b"}, 1, []string{"/c/x for ExampleBot: allowed, now disallowed", "/c/x for *: allowed, now disallowed", "2 of 4 decisions changed (2 URLs, 2 crawlers)"}, nil},
		{"crawlers given with -agent", "", []string{"-agent", "OtherBot", old, nu, "/c"}, 1, []string{"/c for OtherBot: allowed, now disallowed", "1 of 1 decision changed (1 URL, 1 crawler)"}, nil},
		{"a crawler's tokens in one -agent", "", []string{"-agent", "ExampleBot-News,ExampleBot", old, nu, "/c"}, 1, []string{"/c for ExampleBot-News,ExampleBot: allowed, now disallowed"}, nil},
		{"URLs from a file", "", []string{"-urls", urls, old, nu}, 1, []string{"/c/1 for *", "2 of 4 decisions changed (2 URLs, 2 crawlers)"}, nil},
		{"URLs from standard input", "/c\n", []string{"-urls", "-", old, nu}, 1, []string{"/c for *", "(1 URL, 2 crawlers)"}, nil},
		{"a robots.txt from standard input", "User-agent: *\nDisallow: /a\n", []string{"-", nu, "/c"}, 1, []string{"/c for *", "<stdin>: allowed"}, nil},
		{"an unreadable URL is bad usage", "", []string{old, nu, "ftp://x/"}, 2, nil, []string{`"ftp://x/" is neither a path nor an http(s) URL`}},
		{"one file is bad usage", "", []string{old}, 2, nil, []string{"give the OLD and the NEW robots.txt", "usage: robotstxt diff"}},
		{"a missing file is bad usage", "", []string{old, "no-such.txt"}, 2, nil, []string{"no-such.txt"}},
		{"stdin twice is bad usage", "", []string{"-", "-"}, 2, nil, []string{"only one of OLD and NEW"}},
		{"a bad agent is bad usage", "", []string{"-agent", "ü", old, nu}, 2, nil, []string{"no product token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, tt.stdin, append([]string{"diff"}, tt.args...)...)
			check(t, status, stdout, stderr, tt.wantStatus, tt.wantOut, tt.wantErr)
		})
	}

	status, stdout, _ := runCLI(t, "", "diff", "-json", old, nu, "/c", "/a")
	var got diff.Result
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || status != 1 {
		t.Fatalf("diff -json: status %d, %v\n%s", status, err, stdout)
	}
	if got.Compared != 4 || len(got.Changes) != 2 || len(got.Agents) != 2 {
		t.Fatalf("diff -json: %+v, want 2 changes of 4 decisions", got)
	}
	c := got.Changes[0]
	if c.URL != "/c" || c.Agent != "ExampleBot" || !c.Old.Allowed || c.New.Allowed || c.Old.Rule != nil || c.New.Rule == nil || c.New.Rule.Line != 7 {
		t.Errorf("first change %+v, want /c for ExampleBot now refused by line 7", c)
	}
}
