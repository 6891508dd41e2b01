package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
)

// warned is a fixture with a warning on lines 1, 3, 4 and 5.
const warned = "../../testdata/cli/warnings.txt"

// clean is a fixture without warnings.
const clean = "../../testdata/cli/failing/robots.txt"

// lintLines returns the lines lint must print for the robots.txt data,
// named name.
func lintLines(t *testing.T, name string, data []byte) string {
	t.Helper()
	var b strings.Builder
	for _, w := range policy.Parse(data).Warnings() {
		level := ""
		if w.Severity != policy.SeverityWarning {
			level = w.Severity.String() + ": "
		}
		fmt.Fprintf(&b, "%s:%d: %s%s\n", name, w.Line, level, w.Message)
	}
	return b.String()
}

func TestLint(t *testing.T) {
	warnedData, err := os.ReadFile(warned)
	if err != nil {
		t.Fatal(err)
	}
	warnedOut := lintLines(t, warned, warnedData)
	for _, line := range []int{1, 3, 4, 5} {
		if !strings.Contains(warnedOut, fmt.Sprintf("%s:%d: ", warned, line)) {
			t.Fatalf("fixture %s has no warning on line %d:\n%s", warned, line, warnedOut)
		}
	}
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    []string
	}{
		{name: "every warning is FILE:LINE: message, and warnings fail", args: []string{warned}, wantStatus: 1, wantOut: warnedOut},
		{name: "a clean file passes silently", args: []string{clean}},
		{name: "an empty Disallow alone in its group is the allow-all: no word", args: []string{"../../testdata/cli/allow-all.txt"}},
		{
			name:    "an empty Disallow beside other rules is a note, which never fails",
			args:    []string{"../../testdata/cli/notes.txt"},
			wantOut: "../../testdata/cli/notes.txt:2: note: empty Disallow disallows nothing; the group's other rules decide\n",
		},
		{name: "files are linted in order", args: []string{clean, warned}, wantStatus: 1, wantOut: warnedOut},
		{
			name:    "- reads standard input",
			stdin:   string(warnedData),
			args:    []string{"-"},
			wantOut: strings.ReplaceAll(warnedOut, warned+":", "<stdin>:"), wantStatus: 1,
		},
		{
			name:       "a missing file is bad usage; the others are still linted",
			args:       []string{"../../testdata/cli/no-such-file.txt", warned},
			wantStatus: 2,
			wantOut:    warnedOut,
			wantErr:    []string{"no-such-file.txt"},
		},
		{name: "a directory is bad usage", args: []string{"../../testdata/cli"}, wantStatus: 2, wantErr: []string{"testdata/cli"}},
		{name: "a file is required", wantStatus: 2, wantErr: []string{"no file to lint", "usage: robotstxt lint"}},
		{name: "an unknown flag is bad usage", args: []string{"-strict", warned}, wantStatus: 2, wantErr: []string{"-strict"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, tt.stdin, append([]string{"lint"}, tt.args...)...)
			check(t, status, stdout, stderr, tt.wantStatus, nil, tt.wantErr)
			if stdout != tt.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.wantOut)
			}
		})
	}
}

func TestLintJSON(t *testing.T) {
	status, stdout, stderr := runCLI(t, "", "lint", "-json", warned, clean)
	if status != 1 {
		t.Errorf("exit status %d, want 1; stderr:\n%s", status, stderr)
	}
	var got []lintResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if len(got) != 2 || got[0].File != warned || got[1].File != clean {
		t.Fatalf("got %+v, want one result per file, in order", got)
	}
	if len(got[0].Warnings) != 4 || got[0].Warnings[0].Line != 1 {
		t.Errorf("warnings of %s: %+v, want 4 from line 1", warned, got[0].Warnings)
	}
	if !strings.Contains(stdout, `"warnings": []`) {
		t.Errorf("a clean file's warnings should be an empty array, not null:\n%s", stdout)
	}
}

// TestLintPastMaxSize checks that content past policy.MaxSize is reported
// at its first line and not linted, as crawlers do not read it.
func TestLintPastMaxSize(t *testing.T) {
	const header = "User-agent: *\n"
	rule := "Disallow: /" + strings.Repeat("a", 88) + "\n" // 100 bytes
	data := header + strings.Repeat(rule, policy.MaxSize/len(rule)+10) + "Allow: nope\n"
	name := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(name, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	firstIgnored := 1 + (policy.MaxSize-len(header))/len(rule) + 1

	status, stdout, stderr := runCLI(t, "", "lint", name)
	want := fmt.Sprintf("%s:%d: content past 500 KiB is ignored by crawlers\n", name, firstIgnored)
	if status != 1 || stdout != want || stderr != "" {
		t.Errorf("exit status %d, stdout %q, stderr %q; want 1 and %q", status, stdout, stderr, want)
	}
}

// TestLintLenientReadings checks that lint shows, on their lines, the
// warnings of the lines that RFC 9309 and Google's parser read leniently
// or as groups matching no crawler: the suites of testdata/conformance
// that check how those lines decide.
func TestLintLenientReadings(t *testing.T) {
	const dir = "../../testdata/conformance/"
	tests := []struct {
		suite string
		want  []string // LINE: message, as lint prints them after FILE:
	}{
		{"user-agent-no-token", []string{`3: User-agent "* (everyone else)" read as "*"`}},
		{"user-agent-no-token-groups", []string{
			`3: User-agent "ü-bot" has no product token; its group applies to no crawler`,
			`5: User-agent "*bot" has no product token; its group applies to no crawler`,
			`7: empty User-agent names no crawler; its group applies to none`,
		}},
		{"no-colon-lines", []string{
			`1: no colon: "user-agent bot4" read as "user-agent: bot4"`,
			`2: no colon: "Disallow /x" read as "disallow: /x"`,
			`3: no colon: "Dissallow\t/typo" read as "disallow: /typo"`,
			`4: no colon: "Crawl-delay 3" read as "crawl-delay: 3"`,
			`7: no colon: not a robots.txt line; ignored`,
			`8: no colon: not a robots.txt line; ignored`,
			`9: no colon: "Disallow /v" read as "disallow: /v"`,
		}},
		{"crawl-delay-malformed-no-split", []string{`2: Crawl-delay "soon" is not a number of seconds; ignored`}},
	}
	for _, tt := range tests {
		t.Run(tt.suite, func(t *testing.T) {
			file := dir + tt.suite + "/robots.txt"
			status, stdout, stderr := runCLI(t, "", "lint", file)
			var want strings.Builder
			for _, w := range tt.want {
				want.WriteString(file + ":" + w + "\n")
			}
			check(t, status, stdout, stderr, 1, nil, nil)
			if stdout != want.String() {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want.String())
			}
		})
	}
}

// TestLintFailLevel checks that lint fails only at the level asked for:
// by default on errors and warnings, with -fail error on errors alone,
// with -fail note on anything; a note alone never fails by default.
func TestLintFailLevel(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	errs := write("errors.txt", "Disallow: /stray\nUser-agent: *\nDisallow: /ok\n")
	warns := write("warnings.txt", "User-agent: *\nNoindex: /x\nDisallow: /ok\n")
	notes := write("notes.txt", "User-agent: Googlebot/2.1\nDisallow: /ok\n")
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{"an error fails by default", []string{errs}, 1, []string{errs + ":1: error: Disallow before any User-agent line"}, nil},
		{"a warning fails by default", []string{warns}, 1, []string{warns + ":2: Noindex is not part of RFC 9309"}, nil},
		{"a note never fails by default", []string{notes}, 0, []string{notes + `:1: note: User-agent "Googlebot/2.1" read as its product token "Googlebot"`}, nil},
		{"-fail error fails on an error", []string{"-fail", "error", errs}, 1, nil, nil},
		{"-fail error passes a warning, still printed", []string{"-fail", "error", warns}, 0, []string{"Noindex"}, nil},
		{"-fail note fails on a note", []string{"-fail", "note", notes}, 1, nil, nil},
		{"-fail warning is the default", []string{"-fail=warning", notes, warns}, 1, nil, nil},
		{"an unknown level is bad usage", []string{"-fail", "fatal", errs}, 2, nil, []string{`-fail is "fatal", want error, warning or note`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, "", append([]string{"lint"}, tt.args...)...)
			check(t, status, stdout, stderr, tt.wantStatus, tt.wantOut, tt.wantErr)
		})
	}
	status, stdout, _ := runCLI(t, "", "lint", "-json", "-fail", "error", errs, warns)
	var got []lintResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || status != 1 {
		t.Fatalf("lint -json: status %d, %v\n%s", status, err, stdout)
	}
	if len(got) != 2 || !got[0].Failed || got[1].Failed || got[0].Warnings[0].Severity != "error" {
		t.Errorf("lint -json -fail error: %+v, want the first file failed on its error and the second not", got)
	}
}

// TestLintPreferences checks that lint reads Content-Usage and
// Content-Signal rather than calling them unknown: Cloudflare's managed
// file is clean, and malformed values are warned about on their lines,
// with notes saying what to write.
func TestLintPreferences(t *testing.T) {
	status, stdout, stderr := runCLI(t, "", "lint", "../../testdata/conformance/content-signal-cloudflare/robots.txt")
	if status != 0 || stdout != "" || stderr != "" {
		t.Errorf("Cloudflare's managed file: exit status %d, output %q %q; want it clean", status, stdout, stderr)
	}
	const file = "../../testdata/cli/preferences.txt"
	status, stdout, _ = runCLI(t, "", "lint", file)
	want := file + ":6: note: Content-Usage search=yes is an unknown preference; write search=y\n"
	if status != 0 || stdout != want {
		t.Errorf("exit status %d, output:\n%s\nwant 0 and:\n%s", status, stdout, want)
	}
	status, stdout, _ = runCLI(t, "User-agent: *\nContent-Usage: train-ai=n,\nContent-Signal: ai-train=n\n", "lint", "-")
	if status != 1 || !strings.Contains(stdout, "<stdin>:2: Content-Usage value") || !strings.Contains(stdout, "<stdin>:3: note: Content-Signal ai-train=n is not read; write ai-train=no") || strings.Contains(stdout, "unknown field") {
		t.Errorf("exit status %d, output:\n%s", status, stdout)
	}
}
