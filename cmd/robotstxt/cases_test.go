package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countCases counts the rows of every cases.csv under dir.
func countCases(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "cases.csv" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		n += len(rows) - 1 // the header
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCasesSuitesPass runs the conformance suites and the hand-written
// extra suites of testdata/cli/extra: every case must pass.
func TestCasesSuitesPass(t *testing.T) {
	for _, dir := range []string{"../../testdata/conformance", "../../testdata/cli/extra"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			status, stdout, stderr := runCLI(t, "", "cases", dir)
			want := fmt.Sprintf("%d passed, 0 failed\n", countCases(t, dir))
			if status != 0 || stdout != want || stderr != "" {
				t.Errorf("exit status %d, stderr %q, stdout:\n%s\nwant 0 and %q", status, stderr, stdout, want)
			}
		})
	}
}

// failingOut is what cases prints for the suite in testdata/cli/failing.
func failingOut(dir string) string {
	csv, robots := dir+"/cases.csv", dir+"/robots.txt"
	return csv + ":3: ExampleBot /private/open: expected disallowed, got allowed by Allow: /private/open (line 3), " + robots + ":3\n" +
		csv + ":4: ExampleBot /public: expected disallowed, got allowed (no rule matched)\n" +
		csv + ":5: ExampleBot ftp://example.com/x: expected allowed, but the URL cannot be read: not a path or an http(s) URL\n" +
		csv + ":6: ExampleBot /robots.txt: expected disallowed, got allowed (/robots.txt is always allowed)\n" +
		csv + ":7: OtherBot /private: expected disallowed, got allowed (no group names this crawler and there is no * group)\n" +
		"1 passed, 5 failed\n"
}

func TestCases(t *testing.T) {
	const failing = "../../testdata/cli/failing"
	empty := t.TempDir()
	badCSV := filepath.Join(t.TempDir(), "cases.csv")
	if err := os.WriteFile(badCSV, []byte("url,expected\n/x,allowed\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	multiline := t.TempDir()
	for name, data := range map[string]string{
		"robots.txt": "User-agent: *\nDisallow: /a\n",
		"cases.csv":  "agent,url,expected\nAnyBot,\"/b\nc\",disallowed\n",
	} {
		if err := os.WriteFile(filepath.Join(multiline, name), []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    []string
	}{
		{
			name:       "every disagreement is printed, then the counts",
			args:       []string{failing},
			wantStatus: 1,
			wantOut:    failingOut(failing),
		},
		{
			name:       "-robots and -cases name one suite",
			args:       []string{"-robots", failing + "/robots.txt", "-cases", failing + "/cases.csv"},
			wantStatus: 1,
			wantOut:    failingOut(failing),
		},
		{
			name:       "suites of several directories add up",
			args:       []string{failing, "../../testdata/conformance/url-forms"},
			wantStatus: 1,
			wantOut:    strings.Replace(failingOut(failing), "1 passed", fmt.Sprintf("%d passed", 1+countCases(t, "../../testdata/conformance/url-forms")), 1),
		},
		{
			name:       "a URL with a line break is quoted to keep its report on one line",
			args:       []string{multiline},
			wantStatus: 1,
			wantOut: filepath.Join(multiline, "cases.csv") + `:2: AnyBot "/b\nc": expected disallowed, got allowed (no rule matched)` + "\n" +
				"0 passed, 1 failed\n",
		},
		{
			name:       "a directory without suites is bad usage",
			args:       []string{empty},
			wantStatus: 2,
			wantOut:    "0 passed, 0 failed; 1 suite not run\n",
			wantErr:    []string{empty, "no folder holds both robots.txt and cases.csv"},
		},
		{
			name:       "a missing directory is bad usage",
			args:       []string{"../../testdata/cli/no-such-dir"},
			wantStatus: 2,
			wantOut:    "0 passed, 0 failed; 1 suite not run\n",
			wantErr:    []string{"no-such-dir"},
		},
		{
			name:       "a missing robots.txt is bad usage",
			args:       []string{"-robots", "../../testdata/cli/no-such-file.txt", "-cases", failing + "/cases.csv"},
			wantStatus: 2,
			wantOut:    "0 passed, 0 failed; 1 suite not run\n",
			wantErr:    []string{"no-such-file.txt"},
		},
		{
			name:       "a cases file without the header is bad usage",
			args:       []string{"-robots", failing + "/robots.txt", "-cases", badCSV},
			wantStatus: 2,
			wantOut:    "0 passed, 0 failed; 1 suite not run\n",
			wantErr:    []string{badCSV, `no "agent" column`},
		},
		{
			name:       "suites that ran are counted beside those that could not be read",
			args:       []string{failing, "../../testdata/cli/no-such-dir", "-cases", "../../testdata/cli/no-such.csv", "-robots", failing + "/robots.txt"},
			wantStatus: 2,
			wantOut:    strings.Replace(failingOut(failing), "1 passed, 5 failed\n", "1 passed, 5 failed; 2 suites not run\n", 1),
			wantErr:    []string{"no-such-dir", "no-such.csv"},
		},
		{
			name:       "-robots needs -cases",
			args:       []string{"-robots", failing + "/robots.txt"},
			wantStatus: 2,
			wantErr:    []string{"-robots and -cases go together", "usage: robotstxt cases"},
		},
		{
			name:       "a suite is required",
			wantStatus: 2,
			wantErr:    []string{"no suite"},
		},
		{
			name:       "an unknown flag is bad usage",
			args:       []string{"-v", failing},
			wantStatus: 2,
			wantErr:    []string{"-v"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, "", append([]string{"cases"}, tt.args...)...)
			check(t, status, stdout, stderr, tt.wantStatus, nil, tt.wantErr)
			if stdout != tt.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.wantOut)
			}
		})
	}
}

// writeSuite writes a suite of robots and cases into a new folder.
func writeSuite(t *testing.T, robots, cases string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{"robots.txt": robots, "cases.csv": cases} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCasesBadRow checks that a row that cannot be run fails with its
// line and why while the other rows run and are counted.
func TestCasesBadRow(t *testing.T) {
	dir := writeSuite(t, "User-agent: *\nDisallow: /private\n",
		"agent,url,expected,note\nbot,/private,disallowed,\nbot,/x,maybe,\n,/y,allowed,\nbot,/public,disallowed,wrong on purpose\nbot,/public,allowed,\n")
	csv := filepath.Join(dir, "cases.csv")
	status, stdout, stderr := runCLI(t, "", "cases", dir)
	want := csv + `:3: bad row: expected is "maybe", want allowed or disallowed` + "\n" +
		csv + ":4: bad row: agent is empty: give a crawler's product token, or * for the * groups\n" +
		csv + ":5: bot /public: expected disallowed, got allowed (no rule matched)\n" +
		"2 passed, 3 failed\n"
	if status != 1 || stdout != want || stderr != "" {
		t.Errorf("exit status %d, stderr %q, stdout:\n%s\nwant 1 and:\n%s", status, stderr, stdout, want)
	}
}

// TestCasesJSON checks -json: one object per case, passed or not, bad
// rows included, and the summary with what was not run.
func TestCasesJSON(t *testing.T) {
	dir := writeSuite(t, "User-agent: *\nDisallow: /private\n",
		"agent,url,expected,note\nbot,/private,disallowed,n1\nbot,/x,maybe,\nbot,ftp://h/,allowed,\nbot,/public,disallowed,\n")
	status, stdout, stderr := runCLI(t, "", "cases", "-json", dir, "../../testdata/cli/no-such-dir")
	if status != 2 || !strings.Contains(stderr, "no-such-dir") {
		t.Errorf("exit status %d, stderr %q; want 2 for the missing dir", status, stderr)
	}
	var got casesOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if len(got.Cases) != 4 {
		t.Fatalf("%d cases, want 4:\n%s", len(got.Cases), stdout)
	}
	first, bad, unreadable, wrong := got.Cases[0], got.Cases[1], got.Cases[2], got.Cases[3]
	if !first.Passed || first.Line != 2 || first.Expected != "disallowed" || first.Note != "n1" ||
		first.Decision == nil || first.Decision.Rule == nil || first.Decision.Rule.Line != 2 || first.Robots != filepath.Join(dir, "robots.txt") {
		t.Errorf("passing case: %+v", first)
	}
	if bad.Passed || bad.Line != 3 || bad.Decision != nil || !strings.Contains(bad.Error, `bad row: expected is "maybe"`) {
		t.Errorf("bad row: %+v", bad)
	}
	if unreadable.Passed || !strings.Contains(unreadable.Error, "the URL cannot be read") {
		t.Errorf("unreadable URL: %+v", unreadable)
	}
	if wrong.Passed || wrong.Decision == nil || !wrong.Decision.Allowed || wrong.Error != "" {
		t.Errorf("disagreeing case: %+v", wrong)
	}
	s := got.Summary
	if s.Passed != 1 || s.Failed != 3 || s.NotRun != 1 || len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "no-such-dir") {
		t.Errorf("summary %+v, want 1 passed, 3 failed, 1 not run with why", s)
	}
}

// TestCasesPreferences checks the optional train-ai and search columns:
// a row whose decision is right but whose preference is not fails, with
// the lines that gave the preference.
func TestCasesPreferences(t *testing.T) {
	dir := t.TempDir()
	robots, csvName := filepath.Join(dir, "robots.txt"), filepath.Join(dir, "cases.csv")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Signal: search=yes\n"), 0o644)
	os.WriteFile(csvName, []byte("agent,url,expected,note,train-ai,search\n"+
		"bot,/a,allowed,,n,y\n"+
		"bot,/a,allowed,,y,unknown\n"+
		"bot,/private,disallowed,,n,\n"+
		"bot,/b,allowed,,,\n"), 0o644)
	status, stdout, stderr := runCLI(t, "", "cases", "-robots", robots, "-cases", csvName)
	want := csvName + ":3: bot /a: expected train-ai=y, got n (by Content-Usage: train-ai=n, " + robots + ":3); expected search=unknown, got y (by Content-Signal: search=yes, " + robots + ":4)\n" +
		csvName + ":4: bot /private: expected train-ai=n, got unknown (the path is disallowed, so no Content-Usage applies)\n" +
		"2 passed, 2 failed\n"
	if status != 1 || stdout != want || stderr != "" {
		t.Errorf("exit status %d, stderr %q, stdout:\n%s\nwant 1 and:\n%s", status, stderr, stdout, want)
	}
}
