package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

const lintSynopsis = "usage: robotstxt lint [-fail error|warning|note] [-json] FILE...\n"

const lintHelp = `Lint prints every finding of each robots.txt file as FILE:LINE: message,
with its level: an error as FILE:LINE: error: message, a note as
FILE:LINE: note: message. FILE - reads standard input.

  error    the file cannot be what its author meant: a rule before any
           User-agent line, a misspelt field no crawler reads (User-agnet,
           which drops a group), a pattern crawlers ignore (a space, a bad
           % escape, no leading / or *). Fix it.
  warning  input that is ignored or read leniently, which a crawler may
           read differently: Dissalow read as Disallow, a line without a
           colon, Noindex or Host (not in RFC 9309), a relative Sitemap.
  note     a reading every major crawler shares: a User-agent read by its
           product token (Googlebot/2.1 as Googlebot), an empty Disallow
           beside other rules. Never a failure.

An empty Disallow alone in its group is the usual allow-all and gets no
word. Each finding with an obvious fix says it.

Exit status: 0 when no file has a finding at the -fail level or above
(by default errors and warnings fail; -fail error fails on errors
alone), 1 when one has, 2 for bad usage or a file that cannot be read.
`

// lintResult is the -json output for one file.
type lintResult struct {
	File     string           `json:"file"`
	Warnings []report.Warning `json:"warnings"`
	Failed   bool             `json:"failed"` // a finding is at the -fail level or above
}

// runLint runs "robotstxt lint".
func runLint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand("lint", lintSynopsis, lintHelp, stdout, stderr)
	asJSON := cmd.fl.Bool("json", false, `print a JSON array of {"file", "warnings", "failed"}`)
	failOn := cmd.fl.String("fail", "warning", "the least `level` that fails: error, warning or note")
	files, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case len(files) == 0:
		return cmd.usageError("no file to lint")
	}
	threshold, ok := failLevel(*failOn)
	if !ok {
		return cmd.usageError("-fail is %q, want error, warning or note", *failOn)
	}
	results := make([]lintResult, 0, len(files))
	for _, name := range files {
		f, err := loadRobots(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "robotstxt lint: %v\n", err)
			status = 2
			continue
		}
		ws := report.Warnings(f.robots)
		if f.cut != nil {
			ws = append(ws, f.cut.Warning())
		}
		failed := slices.ContainsFunc(ws, func(w report.Warning) bool { return fails(w, threshold) })
		if status == 0 && failed {
			status = 1
		}
		results = append(results, lintResult{File: f.name, Warnings: ws, Failed: failed})
	}
	ok = writeOutput("lint", stdout, stderr, *asJSON, results, func(w io.Writer) {
		for _, r := range results {
			for _, wn := range r.Warnings {
				fmt.Fprintf(w, "%s:%d: %s%s\n", r.File, wn.Line, notePrefix(wn), wn.Message)
			}
		}
	})
	if !ok {
		return 2
	}
	return status
}

// notePrefix is "note: " for a note, "error: " for an error, "" for a
// warning.
func notePrefix(w report.Warning) string {
	if w.Severity == policy.SeverityWarning.String() {
		return ""
	}
	return w.Severity + ": "
}

// rank orders the levels by how much they matter: note, warning, error.
func rank(severity string) int {
	switch severity {
	case policy.SeverityError.String():
		return 2
	case policy.SeverityNote.String():
		return 0
	}
	return 1
}

// failLevel reads the -fail flag's level.
func failLevel(s string) (int, bool) {
	switch s {
	case "error", "warning", "note":
		return rank(s), true
	}
	return 0, false
}

// fails reports whether w is at the level threshold or above.
func fails(w report.Warning, threshold int) bool { return rank(w.Severity) >= threshold }
