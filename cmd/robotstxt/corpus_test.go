package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusDir holds 147 real robots.txt files.
const corpusDir = "../../testdata/robots-corpus"

// corpusGolden pins, for every corpus file that lint fails, the findings
// that make it fail, one FILE:LINE: line each, in file order.
const corpusGolden = "testdata/corpus-lint.golden"

var update = flag.Bool("update", false, "rewrite "+corpusGolden+" from what lint prints")

// TestLintCorpus runs robotstxt lint over every corpus file and checks
// which fail and why against corpusGolden: a file fails only for an error
// or a warning, never for a note, and with -fail error only for an error.
// Run it with -update to rewrite the golden file after a deliberate change.
func TestLintCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	// urls.txt is the corpus's list of URLs, not a robots.txt file.
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "urls.txt" })
	if err != nil || len(files) != 147 {
		t.Fatalf("corpus %s: %d files (%v), want 147", corpusDir, len(files), err)
	}
	var got strings.Builder
	failed, failedOnErrors := 0, 0
	for _, f := range files {
		status, stdout, stderr := runCLI(t, "", "lint", f)
		if stderr != "" || status > 1 {
			t.Fatalf("lint %s: exit status %d, stderr %q", f, status, stderr)
		}
		var failing, errs []string
		for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			if line == "" {
				continue
			}
			_, msg, _ := strings.Cut(strings.TrimPrefix(line, f+":"), ": ")
			switch {
			case strings.HasPrefix(msg, "note: "):
				continue
			case strings.HasPrefix(msg, "error: "):
				errs = append(errs, line)
			}
			failing = append(failing, line)
		}
		if (status == 1) != (len(failing) > 0) {
			t.Errorf("lint %s: exit status %d with %d errors and warnings; a file fails exactly when it has one:\n%s", f, status, len(failing), stdout)
		}
		if len(failing) > 0 {
			failed++
		}
		status, _, _ = runCLI(t, "", "lint", "-fail", "error", f)
		if (status == 1) != (len(errs) > 0) {
			t.Errorf("lint -fail error %s: exit status %d with %d errors", f, status, len(errs))
		}
		if len(errs) > 0 {
			failedOnErrors++
		}
		for _, line := range failing {
			got.WriteString(strings.TrimPrefix(line, corpusDir+"/") + "\n")
		}
	}
	t.Logf("%d of %d files fail lint, %d of them on errors", failed, len(files), failedOnErrors)
	if *update {
		if err := os.WriteFile(corpusGolden, []byte(got.String()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(corpusGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		gotLines, wantLines := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gotLines), len(wantLines)); i++ {
			g, w := at(gotLines, i), at(wantLines, i)
			if g != w {
				t.Fatalf("lint over the corpus differs from %s at line %d:\ngot:  %s\nwant: %s\n(run go test -run TestLintCorpus -update after a deliberate change)", corpusGolden, i+1, g, w)
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}
