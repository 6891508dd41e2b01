// Robotstxt checks robots.txt files the way a crawler reads them.
//
// Usage:
//
//	robotstxt <command> [arguments]
//
// The commands are:
//
//	test   decide URLs for a crawler and explain each decision
//	lint   print the errors, warnings and notes of robots.txt files
//	cases  run release checks: URLs with the decision each must get
//	diff   list the URLs whose decision changes between two robots.txt files
//	serve  run the explorer page on a local address
//
// Every command reads a robots.txt file as a crawler does: content past
// the first 500 KiB is ignored (RFC 9309 section 2.5), with a warning.
//
// # Test
//
//	robotstxt test -robots FILE -agent TOKEN [-expect allowed|disallowed] [-json] URL...
//
// Test prints, for each URL (a path such as /a?b=1 or an http or https
// URL), the decision, the rule that decided it with its line, the groups
// that applied and the warnings of those lines:
//
//	DISALLOWED  /private/x
//	  by Disallow: /private (line 4) in the group for ExampleBot (lines 3-6)
//
// -agent may be repeated or hold a comma-separated list, most specific
// token first (Googlebot-Image,Googlebot); a full User-Agent string is
// read as its product token. -json prints a JSON array of decisions
// instead. -expect turns the command into a check that every URL gets
// that decision.
//
// # Lint
//
//	robotstxt lint [-fail error|warning|note] [-json] FILE...
//
// Lint prints every finding as FILE:LINE: message, an error as FILE:LINE:
// error: message and a note as FILE:LINE: note: message; FILE - reads
// standard input. An error marks a line that cannot be what its author
// meant (a rule before any User-agent line, a misspelt field that no
// crawler reads, a pattern crawlers ignore); a warning, input ignored or
// read leniently that a crawler may read differently; a note, a reading
// every major crawler shares (a User-agent read by its product token, an
// empty Disallow beside other rules). Each finding with an obvious fix
// says it. Lint fails (exit status 1) on errors and warnings, or with
// -fail error on errors alone; notes never fail unless -fail note. An
// empty Disallow alone in its group is the allow-all of RFC 9309 and gets
// no word.
//
// # Cases
//
//	robotstxt cases [-json] -robots FILE -cases FILE.csv
//	robotstxt cases [-json] DIR...
//
// Cases runs release checks: each cases.csv (header agent,url,expected,note,
// the format of testdata/conformance) lists URLs and the decision each must
// get for the robots.txt beside it. Each DIR is searched for folders holding
// both robots.txt and cases.csv. Cases prints every disagreement, and every
// row that cannot be run (CASES:LINE: bad row: why) as a failure while the
// other rows run, and ends with the line "N passed, M failed", or "N
// passed, M failed; K suites not run" when a suite, or a DIR, could not be
// read (exit status 2). -json prints one object per case and the summary.
//
// # Diff
//
//	robotstxt diff [-agent TOKEN]... [-urls FILE] [-json] OLD NEW [URL...]
//
// Diff compares the deployed robots.txt (OLD) with the one about to be
// deployed (NEW): for each crawler given with -agent, or else every
// crawler either file names plus *, and each URL given, or else the paths
// the rules of both files are written for with their neighbours (a path
// inside, a query variant, the path capitalised, a prefix neighbour), it
// prints every URL whose decision changes, with the deciding rule and its
// line in each file, and exits 1 when any does, so that it can gate a
// deploy. -json prints the comparison as JSON.
//
// # Serve
//
//	robotstxt serve [-addr HOST:PORT] [-robots FILE]
//
// Serve runs the explorer, a page to edit a robots.txt file and see
// decisions as they change, until interrupted.
//
// # Exit status
//
// 0 when all is well, 1 when a check fails (test -expect differs, lint
// finds an error or warning, a case disagrees, a decision changes in
// diff), 2 for bad usage: an unknown command or
// flag, a missing or unreadable file, a URL that is neither a path nor an
// http(s) URL.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `robotstxt checks robots.txt files the way a crawler reads them.

Usage:

	robotstxt <command> [arguments]

The commands are:

	test   decide URLs for a crawler and explain each decision
	lint   print the errors, warnings and notes of robots.txt files
	cases  run release checks: URLs with the decision each must get
	diff   list the URLs whose decision changes between two robots.txt files
	serve  run the explorer page on a local address

Run 'robotstxt <command> -h' for a command's flags.
Exit status: 0 all is well, 1 a check failed, 2 bad usage.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args (without the program name) and returns
// the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "test":
		return runTest(args[1:], stdin, stdout, stderr)
	case "lint":
		return runLint(args[1:], stdin, stdout, stderr)
	case "cases":
		return runCases(args[1:], stdin, stdout, stderr)
	case "diff":
		return runDiff(args[1:], stdin, stdout, stderr)
	case "serve":
		return runServe(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "robotstxt: unknown command %q\nRun 'robotstxt -h' for usage.\n", args[0])
	return 2
}
