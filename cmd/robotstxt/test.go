package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crawlkit/robots/internal/report"
)

const testSynopsis = "usage: robotstxt test -robots FILE -agent TOKEN [-expect allowed|disallowed] [-json] URL...\n"

const testHelp = `Test decides each URL (a path such as /a?b=1, or an http or https URL) for
the crawler and explains the decision: the deciding rule and its line, the
groups that applied, and the findings of those lines that can concern the
URL (a finding on another rule's pattern when that rule, as its author
meant it, could match the URL). When the file has
Content-Usage or Content-Signal lines, each URL's AI usage preferences
follow, one label a line (train-ai, search, ai-input: y, n or unknown),
with the lines that stated them.

Exit status: 0, or 1 when -expect is given and a URL differs from it,
or 2 for bad usage, including a URL that is neither a path nor http(s).
`

// runTest runs "robotstxt test".
func runTest(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand("test", testSynopsis, testHelp, stdout, stderr)
	fl := cmd.fl
	file := fl.String("robots", "", "robots.txt `FILE` to read; - reads standard input")
	var agents agentList
	fl.Var(&agents, "agent", "the crawler's product `TOKEN`; repeat it or list tokens with commas, most specific first")
	asJSON := fl.Bool("json", false, "print a JSON array of decisions")
	expect := fl.String("expect", "", "check that every URL gets this `decision` (allowed or disallowed)")
	urls, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case *file == "":
		return cmd.usageError("-robots FILE is required")
	case len(agents.tokens) == 0:
		return cmd.usageError("-agent TOKEN is required: the decision depends on the crawler")
	case *expect != "" && *expect != "allowed" && *expect != "disallowed":
		return cmd.usageError("-expect is %q, want allowed or disallowed", *expect)
	case len(urls) == 0:
		return cmd.usageError("no URL to test")
	}
	for _, n := range agents.notes {
		fmt.Fprintf(stderr, "robotstxt test: %s\n", n)
	}
	f, err := loadRobots(*file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "robotstxt test: %v\n", err)
		return 2
	}
	f.warnCut("test", stderr)

	out := make([]report.Decision, 0, len(urls))
	for _, u := range urls {
		d := report.Decide(f.robots, u, agents.tokens...)
		out = append(out, d)
		switch {
		case d.Error != "":
			fmt.Fprintf(stderr, "robotstxt test: %q: %s\n", u, d.Error)
			status = 2
		case *expect != "" && d.Allowed != (*expect == "allowed") && status == 0:
			status = 1
		}
	}
	ok := writeOutput("test", stdout, stderr, *asJSON, out, func(w io.Writer) {
		// A finding can concern several URLs: each is printed once, under
		// the first URL it concerns.
		shown := make(map[report.Warning]bool)
		for _, d := range out {
			if d.Error == "" {
				writeDecision(w, d, agents.tokens, *expect, shown)
			}
		}
	})
	if !ok {
		return 2
	}
	return status
}

// writeDecision prints one decision for people, with the warnings of its
// lines not in shown, and adds them to shown.
func writeDecision(w io.Writer, d report.Decision, tokens []string, expect string, shown map[report.Warning]bool) {
	label := "DISALLOWED"
	if d.Allowed {
		label = "ALLOWED"
	}
	fmt.Fprintf(w, "%-10s  %s", label, printable(d.URL))
	if d.Path != d.URL {
		fmt.Fprintf(w, "  (matched as %s)", d.Path)
	}
	if text, ok := decoded(d.URL); ok {
		fmt.Fprintf(w, "\n  decoded: %s", printable(text))
	}
	why := explain(d, tokens)
	if d.Rule != nil && len(d.Rule.Pattern) >= longPattern && (d.Path == d.Rule.Pattern || writtenAgain(d.URL, d.Rule.Pattern)) {
		// A long pattern that is the URL written again says nothing new.
		why = strings.Replace(why, d.Rule.Pattern, "the path above", 1)
	}
	fmt.Fprintf(w, "\n  %s\n", why)
	writePreferences(w, d)
	if expect != "" && d.Allowed != (expect == "allowed") {
		fmt.Fprintf(w, "  FAIL: expected %s\n", expect)
	}
	for _, wn := range d.Warnings {
		if shown[wn] {
			continue
		}
		shown[wn] = true
		fmt.Fprintf(w, "  %s: line %d: %s\n", wn.Severity, wn.Line, wn.Message)
	}
}

// writePreferences prints the URL's AI usage preferences, one label a
// line with the lines that stated it, when the file has any:
// "  train-ai=n by Content-Usage: train-ai=n (line 4)".
func writePreferences(w io.Writer, d report.Decision) {
	for _, p := range d.Preferences {
		s := "  " + p.Label + "=" + p.Value
		var from []string
		for _, l := range p.From {
			from = append(from, l.Directive+" (line "+strconv.Itoa(l.Line)+")")
		}
		switch {
		case len(from) > 0:
			s += " by " + strings.Join(from, "; ")
			if p.Resolved != "" {
				s += " (resolved as " + p.Resolved + ")"
			}
		case !d.Allowed && p.Label != "ai-input":
			s += " (disallowed, so no Content-Usage applies)"
		}
		fmt.Fprintln(w, s)
	}
}

// explain says why d was decided as it was: policy's reason, and the
// groups that were consulted.
func explain(d report.Decision, tokens []string) string {
	if len(d.Groups) == 0 {
		return d.Why
	}
	return d.Why + " " + groupsPhrase(d, tokens)
}

// maxSpans is how many groups groupsPhrase lists by their lines; a file
// can name one crawler in thousands of groups.
const maxSpans = 5

// groupsPhrase names the groups that applied in d and their lines: "in the
// group for ExampleBot (lines 3-6)".
func groupsPhrase(d report.Decision, tokens []string) string {
	var b strings.Builder
	b.WriteString("in the ")
	if d.Token == "*" {
		b.WriteString("* ")
	}
	b.WriteString("group")
	if len(d.Groups) > 1 {
		b.WriteString("s")
	}
	if d.Token != "*" {
		b.WriteString(" for " + d.Token)
	}
	spans := make([]string, len(d.Groups))
	for i, g := range d.Groups {
		spans[i] = strconv.Itoa(g.Line)
		if g.EndLine != g.Line {
			spans[i] += "-" + strconv.Itoa(g.EndLine)
		}
	}
	switch {
	case len(spans) == 1 && !strings.Contains(spans[0], "-"):
		b.WriteString(" (line " + spans[0] + ")")
	case len(spans) > maxSpans:
		fmt.Fprintf(&b, " (lines %s and %d more)", strings.Join(spans[:maxSpans], ", "), len(spans)-maxSpans)
	case len(spans) > 0:
		b.WriteString(" (lines " + strings.Join(spans, ", ") + ")")
	}
	var named []string // the tokens tried before falling back
	for _, t := range tokens {
		if t == "*" {
			break
		}
		named = append(named, t)
	}
	if d.Token == "*" && len(named) > 0 {
		b.WriteString(", as no group names " + strings.Join(named, ", "))
	}
	return b.String()
}

// longPattern is the length from which a deciding pattern that repeats
// the URL is not printed a second time.
const longPattern = 40

// decoded returns s with its percent-escapes decoded, when it holds at
// least minEscapes of them and they decode to valid UTF-8 text (a path in
// Thai or Cyrillic, written as bytes), so that a reader sees the path
// its author wrote.
func decoded(s string) (string, bool) {
	if strings.Count(s, "%") < minEscapes {
		return "", false
	}
	text, err := url.PathUnescape(s)
	if err != nil || text == s || !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl) {
		return "", false
	}
	return text, true
}

// minEscapes is how many percent-escapes make a URL worth decoding.
const minEscapes = 3

// writtenAgain reports whether pattern is url's path and query as
// written, url being a path or an absolute URL: a pattern only contained
// in it (a prefix of a longer path) is not.
func writtenAgain(url, pattern string) bool {
	rest, ok := strings.CutSuffix(url, pattern)
	if !ok || rest == "" {
		return ok
	}
	// What is left is a scheme and a host alone.
	_, host, ok := strings.Cut(rest, "://")
	return ok && !strings.ContainsAny(host, "/?#")
}
