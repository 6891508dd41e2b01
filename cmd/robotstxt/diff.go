package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/crawlkit/robots/internal/diff"
	"github.com/crawlkit/robots/internal/report"
)

const diffSynopsis = "usage: robotstxt diff [-agent TOKEN]... [-urls FILE] [-json] OLD NEW [URL...]\n"

const diffHelp = `Diff compares two robots.txt files, the one deployed (OLD) and the one
about to be (NEW), and prints every URL whose decision changes, for which
crawler, with the deciding rule and its line in each file:

  /drafts/x for FixtureBot: allowed, now disallowed
    old.txt: allowed: no rule matched
    new.txt:7: disallowed by Disallow: /drafts (line 7)

The crawlers are those given with -agent (each -agent is one crawler; a
comma-separated list gives its tokens, most specific first), or else
every crawler either file names, plus * for all others. The URLs are
those given after the files and in the -urls file (one a line; - reads
standard input), or else, for every rule of either file, the path it is
written for and its neighbours: a path inside it, a query variant, the
path capitalised, and a prefix neighbour (/drafts gives /drafts/x,
/drafts?x=1, /Drafts and /draftsx), and /. -json prints {"agents",
"urls", "changes", "compared"} instead, each change with its old and new
decision. The last line says how many decisions changed.

More than a million decisions (URLs times crawlers) is refused: name the
crawlers or the URLs.

Exit status: 0 when no decision changes, 1 when one does (so that diff
can gate a deploy), 2 for bad usage, a file that cannot be read, or a
comparison past that limit.
`

// crawlerList is diff's -agent flag: one crawler per flag, each a list of
// product tokens.
type crawlerList [][]string

func (c *crawlerList) String() string { return fmt.Sprint([][]string(*c)) }

// Set adds one crawler, read as test's -agent reads its value.
func (c *crawlerList) Set(value string) error {
	var a agentList
	if err := a.Set(value); err != nil {
		return err
	}
	*c = append(*c, a.tokens)
	return nil
}

// runDiff runs "robotstxt diff".
func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand("diff", diffSynopsis, diffHelp, stdout, stderr)
	var agents crawlerList
	cmd.fl.Var(&agents, "agent", "one crawler: its product `TOKEN`, or its tokens comma-separated, most specific first; repeat for more crawlers")
	urlsFile := cmd.fl.String("urls", "", "read URLs from `FILE`, one a line; - reads standard input")
	asJSON := cmd.fl.Bool("json", false, `print {"agents", "urls", "changes", "compared"}`)
	rest, status, done := cmd.parse(args)
	switch {
	case done:
		return status
	case len(rest) < 2:
		return cmd.usageError("give the OLD and the NEW robots.txt")
	case rest[0] == "-" && rest[1] == "-":
		return cmd.usageError("only one of OLD and NEW can be standard input")
	case *urlsFile == "-" && (rest[0] == "-" || rest[1] == "-"):
		return cmd.usageError("-urls - and a robots.txt from standard input cannot both read it")
	}
	old, err := loadRobots(rest[0], stdin)
	if err == nil {
		old.warnCut("diff", stderr)
		var nu robotsFile
		if nu, err = loadRobots(rest[1], stdin); err == nil {
			nu.warnCut("diff", stderr)
			return compareFiles(cmd, old, nu, agents, rest[2:], *urlsFile, *asJSON, stdin)
		}
	}
	fmt.Fprintf(stderr, "robotstxt diff: %v\n", err)
	return 2
}

// compareFiles runs diff once both files are read.
func compareFiles(cmd *command, old, nu robotsFile, agents [][]string, urls []string, urlsFile string, asJSON bool, stdin io.Reader) int {
	if urlsFile != "" {
		more, err := readURLs(urlsFile, stdin)
		if err != nil {
			fmt.Fprintf(cmd.stderr, "robotstxt diff: %v\n", err)
			return 2
		}
		urls = append(urls, more...)
	}
	if len(urls) == 0 {
		urls = diff.URLs(old.robots, nu.robots)
	}
	if len(agents) == 0 {
		agents = diff.Agents(old.robots, nu.robots)
	}
	if n := len(urls) * len(agents); n > diff.MaxDecisions {
		fmt.Fprintf(cmd.stderr, "robotstxt diff: %d URLs for %d crawlers make %d decisions; the limit is %d: name the crawlers (-agent) or the URLs to compare\n",
			len(urls), len(agents), n, diff.MaxDecisions)
		return 2
	}
	res := diff.Compare(old.robots, nu.robots, agents, urls)
	for _, u := range res.Unreadable {
		fmt.Fprintf(cmd.stderr, "robotstxt diff: %q is neither a path nor an http(s) URL; not compared\n", u)
	}
	ok := writeOutput("diff", cmd.stdout, cmd.stderr, asJSON, res, func(w io.Writer) {
		for _, c := range res.Changes {
			fmt.Fprintf(w, "%s for %s: %s, now %s\n", printable(c.URL), c.Agent, verdict(c.Old.Allowed), verdict(c.New.Allowed))
			fmt.Fprintf(w, "  %s\n  %s\n", side(old.name, c.Old), side(nu.name, c.New))
		}
		fmt.Fprintf(w, "%d of %s changed (%s, %s)\n", len(res.Changes), plural(res.Compared, "decision"),
			plural(len(res.URLs)-len(res.Unreadable), "URL"), plural(len(res.Agents), "crawler"))
	})
	switch {
	case !ok || len(res.Unreadable) > 0:
		return 2
	case len(res.Changes) > 0:
		return 1
	}
	return 0
}

// side is one file's decision in a change: "new.txt:7: disallowed by
// Disallow: /drafts (line 7)", or "old.txt: allowed (no rule matched)".
func side(name string, d report.Decision) string {
	if d.Rule != nil {
		return name + ":" + strconv.Itoa(d.Rule.Line) + ": " + d.Reason
	}
	return name + ": " + d.Reason
}

// readURLs reads the URLs of file name ("-" for stdin), one a line;
// blank lines and lines starting with # are skipped.
func readURLs(name string, stdin io.Reader) ([]string, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := readCapped(r, maxCasesSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
