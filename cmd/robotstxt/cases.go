package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/crawlkit/robots/internal/cases"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

const casesSynopsis = `usage: robotstxt cases [-json] -robots FILE -cases FILE.csv
       robotstxt cases [-json] DIR...
`

const casesHelp = `Cases runs release checks. A cases file is CSV with the header
agent,url,expected,note: a crawler (its product token; a User-Agent is
read by it, Googlebot/2.1 as Googlebot), a path or http(s) URL,
and allowed or disallowed. Optional columns train-ai and search after
note hold the combined AI usage preference the URL must get (y, n or
unknown; an empty cell checks nothing). Each DIR is searched for folders holding both
robots.txt and cases.csv. Every row whose decision differs is printed as
CASES:LINE: AGENT URL: expected ..., got ... (why), and the last line is
"N passed, M failed". A row that cannot be run (an expected value other
than allowed or disallowed, no agent, broken CSV) fails with its line and
why, as CASES:LINE: bad row: why, and so does a row whose URL cannot be
read; the other rows still run. A suite that cannot be read (no such
file, no agent,url,expected header), a missing DIR or one without suites
is printed as an error and counted on the last line: "N passed, M failed;
K suites not run". -json prints {"cases": [...], "summary": {...}}
instead: one object per case (its file, line, agent, url, expected, note,
passed, the decision with its rule, or the error), then the counts and
why each suite was not run.

Exit status: 0 when every case passes, 1 when one fails, 2 for bad usage,
a file that cannot be read, or a DIR without suites.
`

// runCases runs "robotstxt cases".
func runCases(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand("cases", casesSynopsis, casesHelp, stdout, stderr)
	robotsName := cmd.fl.String("robots", "", "robots.txt `FILE` of a suite; - reads standard input")
	casesName := cmd.fl.String("cases", "", "the suite's cases `FILE.csv`")
	asJSON := cmd.fl.Bool("json", false, `print {"cases": [one object per case], "summary": {"passed", "failed", "notRun", "errors"}}`)
	dirs, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case (*robotsName == "") != (*casesName == ""):
		return cmd.usageError("-robots and -cases go together")
	case *robotsName == "" && len(dirs) == 0:
		return cmd.usageError("no suite: give -robots and -cases, or directories")
	}

	var notRun []string // why each suite was not run; a DIR without any counts as one
	var suites []cases.Suite
	if *robotsName != "" {
		suites = append(suites, cases.Suite{Robots: *robotsName, Cases: *casesName})
	}
	for _, dir := range dirs {
		found, err := cases.Find(dir)
		switch {
		case err != nil:
			notRun = append(notRun, err.Error())
		case len(found) == 0:
			notRun = append(notRun, dir+": no folder holds both robots.txt and cases.csv")
		}
		suites = append(suites, found...)
	}

	w := bufio.NewWriter(stdout)
	out := casesOutput{Cases: []caseResult{}}
	for _, s := range suites {
		f, err := loadRobots(s.Robots, stdin)
		if err == nil {
			f.warnCut("cases", stderr)
		}
		var cs []cases.Case
		if err == nil {
			cs, err = loadCases(s.Cases)
		}
		if err != nil {
			notRun = append(notRun, err.Error())
			continue
		}
		for _, r := range cases.Run(f.robots, cs) {
			if r.Passed() {
				out.Summary.Passed++
			} else {
				out.Summary.Failed++
			}
			if *asJSON {
				out.Cases = append(out.Cases, caseResultOf(f, s.Cases, r))
			} else if !r.Passed() {
				writeDisagreement(w, s.Cases, f.name, r)
			}
		}
	}
	for _, msg := range notRun {
		fmt.Fprintf(stderr, "robotstxt cases: %s\n", msg)
	}
	out.Summary.NotRun, out.Summary.Errors = len(notRun), notRun
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(out) // the values always encode; a write error shows in Flush
	} else {
		// The counts alone would read as a clean run when suites were skipped.
		fmt.Fprintf(w, "%d passed, %d failed", out.Summary.Passed, out.Summary.Failed)
		if len(notRun) > 0 {
			fmt.Fprintf(w, "; %s not run", plural(len(notRun), "suite"))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "robotstxt cases: %v\n", err)
		return 2
	}
	switch {
	case len(notRun) > 0:
		return 2
	case out.Summary.Failed > 0:
		return 1
	}
	return 0
}

// casesOutput is the -json output of cases.
type casesOutput struct {
	Cases   []caseResult `json:"cases"`
	Summary casesSummary `json:"summary"`
}

// casesSummary is the closing line of cases, as JSON.
type casesSummary struct {
	Passed int      `json:"passed"`
	Failed int      `json:"failed"`
	NotRun int      `json:"notRun"`           // suites
	Errors []string `json:"errors,omitempty"` // why each suite was not run
}

// caseResult is one case of the -json output.
type caseResult struct {
	Cases    string `json:"cases"`  // the cases file
	Robots   string `json:"robots"` // the robots.txt file
	Line     int    `json:"line"`
	Agent    string `json:"agent"`
	URL      string `json:"url"`
	Expected string `json:"expected,omitempty"` // "allowed" or "disallowed"; absent for a bad row
	Note     string `json:"note,omitempty"`
	Passed   bool   `json:"passed"`
	// Decision is the decision with its rule and groups, absent for a row
	// that could not be run.
	Decision *report.Decision `json:"decision,omitempty"`
	Error    string           `json:"error,omitempty"` // why the row could not be run
}

func caseResultOf(f robotsFile, casesName string, r cases.Result) caseResult {
	out := caseResult{Cases: casesName, Robots: f.name, Line: r.Line, Agent: r.Agent, URL: r.URL, Note: r.Note, Passed: r.Passed()}
	if r.Invalid != nil {
		out.Error = "bad row: " + r.Invalid.Error()
		return out
	}
	out.Expected = verdict(r.Expected)
	d := report.Decide(f.robots, r.URL, cases.Token(r.Agent))
	out.Decision = &d
	if r.Err != nil {
		out.Error = "the URL cannot be read: " + r.Err.Error()
	}
	return out
}

// writeDisagreement prints a failed case of the suite with the cases file
// casesName and the robots.txt robotsName.
func writeDisagreement(w io.Writer, casesName, robotsName string, r cases.Result) {
	if r.Invalid != nil {
		fmt.Fprintf(w, "%s:%d: bad row: %v\n", casesName, r.Line, r.Invalid)
		return
	}
	fmt.Fprintf(w, "%s:%d: %s %s: ", casesName, r.Line, printable(r.Agent), printable(r.URL))
	if r.Err != nil {
		fmt.Fprintf(w, "expected %s, but the URL cannot be read: %v\n", verdict(r.Expected), r.Err)
		return
	}
	if r.Decision.Allowed != r.Expected {
		fmt.Fprintf(w, "expected %s, got %s %s\n", verdict(r.Expected), verdict(r.Decision.Allowed), why(r.Decision, robotsName))
		return
	}
	writePreferenceDisagreement(w, robotsName, r)
}

// writePreferenceDisagreement finishes the line of a case whose decision
// is right but whose preferences are not: "expected train-ai=n, got
// train-ai=y (by Content-Usage: train-ai=y, robots.txt:4)".
func writePreferenceDisagreement(w io.Writer, robotsName string, r cases.Result) {
	var parts []string
	for _, e := range r.PreferencesDiffering() {
		got := r.Preferences.Label(e.Label)
		s := "expected " + e.Label + "=" + e.Usage.String() + ", got " + got.Usage.String()
		var from []string
		for _, l := range got.From {
			from = append(from, l.Directive()+", "+robotsName+":"+strconv.Itoa(l.Line))
		}
		switch {
		case len(from) > 0:
			s += " (by " + strings.Join(from, "; ") + ")"
		case r.Preferences.Disallowed:
			s += " (the path is disallowed, so no Content-Usage applies)"
		default:
			s += " (no line states it)"
		}
		parts = append(parts, s)
	}
	fmt.Fprintln(w, strings.Join(parts, "; "))
}

// printable returns s, quoted if it holds control characters (a CSV field
// may hold a line break) so that each report stays on one line.
func printable(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// plural returns "1 suite" or "2 suites".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func verdict(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "disallowed"
}

// why explains d in a disagreement line with policy's reason, pointing at
// the deciding rule as FILE:LINE too, so that editors can jump to it.
func why(d policy.Decision, robotsName string) string {
	if d.Matched {
		return d.Reason() + ", " + robotsName + ":" + strconv.Itoa(d.Rule.Line)
	}
	return "(" + d.Reason() + ")"
}
