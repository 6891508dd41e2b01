package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

const lintSynopsis = "usage: robotstxt lint [-json] FILE...\n"

const lintHelp = `Lint prints every warning of each robots.txt file as FILE:LINE: message.
FILE - reads standard input. A warning marks a line that crawlers ignore
or read leniently. A note (FILE:LINE: note: message) marks a valid line
that has no effect, such as an empty Disallow beside other rules; an empty
Disallow alone in its group is the usual allow-all and gets no word.

Exit status: 0 when no file has a warning (notes never fail), 1 when one
has, 2 for bad usage or a file that cannot be read.
`

// lintResult is the -json output for one file.
type lintResult struct {
	File     string           `json:"file"`
	Warnings []report.Warning `json:"warnings"`
}

// runLint runs "robotstxt lint".
func runLint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand("lint", lintSynopsis, lintHelp, stdout, stderr)
	asJSON := cmd.fl.Bool("json", false, `print a JSON array of {"file", "warnings"}`)
	files, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case len(files) == 0:
		return cmd.usageError("no file to lint")
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
		if f.cutLine > 0 {
			ws = append(ws, report.Warning{Line: f.cutLine, Message: cutMessage, Severity: policy.SeverityWarning.String()})
		}
		if status == 0 && slices.ContainsFunc(ws, func(w report.Warning) bool { return !w.IsNote() }) {
			status = 1
		}
		results = append(results, lintResult{File: f.name, Warnings: ws})
	}
	ok := writeOutput("lint", stdout, stderr, *asJSON, results, func(w io.Writer) {
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

// notePrefix is "note: " for a note, "" for a warning.
func notePrefix(w report.Warning) string {
	if w.IsNote() {
		return "note: "
	}
	return ""
}
