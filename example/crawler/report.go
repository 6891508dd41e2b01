package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

// report prints what the crawler does, one line per URL, and sums it up.
type report struct {
	w     io.Writer
	now   func() time.Time
	began time.Time

	statuses map[int]int // URLs fetched, by status
	refusals []refusal
	errors   int
}

// refusal is one URL that robots.txt refused, and why.
type refusal struct {
	uri    string // as sent
	reason string
	line   int // of the rule; 0 when robots.txt was unreachable
}

func newReport(w io.Writer, now func() time.Time) *report {
	return &report{w: w, now: now, began: now(), statuses: make(map[int]int)}
}

func (r *report) printf(format string, args ...any) {
	fmt.Fprintf(r.w, format, args...)
}

// robots explains the robots.txt of the crawled origin: what fetching it
// came to and, when it has rules, which group the crawler's token selects
// and why the others do not apply.
func (r *report) robots(info robots.RobotsInfo, token string) {
	switch {
	case info.Outcome == robots.Parsed:
		r.printf("robots.txt: %s, %d lines, %s, %s\n", statusText(info.StatusCode),
			info.Policy.Lines(), plural(len(info.Policy.Groups()), "group"), plural(len(info.Policy.Sitemaps()), "sitemap"))
	case info.Outcome == robots.Unavailable:
		r.printf("robots.txt: %s, so there are no rules and every URL is allowed\n"+
			"  (RFC 9309 section 2.3.1.3).\n", statusText(info.StatusCode))
	case info.Fallback:
		r.printf("robots.txt: unreachable since %s; after that long the last good\n"+
			"  copy is used again (RFC 9309 section 2.3.1.4).\n", info.UnreachableSince.Format(time.DateTime))
	default:
		reason := statusText(info.StatusCode)
		if info.Err != nil {
			reason = strings.TrimPrefix(info.Err.Error(), "robots: ")
		}
		r.printf("robots.txt: unreachable: %s\n", reason)
		r.printf("  While a site's robots.txt cannot be fetched, a crawler must assume it\n"+
			"  disallows everything (RFC 9309 section 2.3.1.4): every URL is refused\n"+
			"  until the transport tries again at %s.\n\n", info.RetryAt.Format(time.TimeOnly))
		return
	}
	if info.Policy != nil {
		r.groups(info.Policy, token)
	}
	r.printf("  %s\n\n", pace(info, token))
}

// groups says which groups of p the crawler follows and which it ignores.
func (r *report) groups(p *policy.Robots, token string) {
	a := p.Agent(token)
	var follows, ignores []string
	for i, g := range p.Groups() {
		desc := fmt.Sprintf("%-12s User-agent: %s", lines(g), strings.Join(g.Agents, ", "))
		if slices.Contains(a.Groups(), i) {
			follows = append(follows, desc)
		} else {
			ignores = append(ignores, desc)
		}
	}
	switch a.Token() {
	case "":
		r.printf("  No group names %s and there is no \"*\" group: every URL is allowed.\n", token)
	case "*":
		r.printf("  No group names %s, so it follows the \"*\" group:\n", token)
	default:
		r.printf("  %s follows the group that names it:\n", token)
	}
	for _, g := range follows {
		r.printf("    %s\n", g)
	}
	if len(ignores) == 0 {
		return
	}
	if a.Token() != "*" && a.Token() != "" {
		r.printf("  A group naming a crawler replaces the \"*\" group for it (RFC 9309\n" +
			"  section 2.2.1), so these do not apply:\n")
	} else {
		r.printf("  Groups for other crawlers do not apply:\n")
	}
	for _, g := range ignores {
		r.printf("    %s\n", g)
	}
}

// lines gives the lines a group spans.
func lines(g policy.Group) string {
	if g.EndLine > g.Line {
		return fmt.Sprintf("lines %d-%d", g.Line, g.EndLine)
	}
	return fmt.Sprintf("line %d", g.Line)
}

// pace says how far apart the transport spaces requests, and why.
func pace(info robots.RobotsInfo, token string) string {
	if info.Delay <= 0 {
		return "Pace: no wait between requests."
	}
	s := fmt.Sprintf("Pace: at most one request every %v", info.Delay)
	if info.Policy != nil {
		if cd, ok := info.Policy.CrawlDelay(token); ok {
			switch {
			case cd == info.Delay:
				return s + ", the Crawl-delay of its group."
			case cd > info.Delay:
				return s + fmt.Sprintf(", its group's Crawl-delay of %v capped.", cd)
			}
		}
	}
	return s + ", the crawler's own minimum."
}

// fetched prints a URL that was sent, with its status.
func (r *report) fetched(u *url.URL, status int, note string) {
	r.statuses[status]++
	r.line("fetched", fmt.Sprint(status), u, note)
}

// refused prints a URL that robots.txt kept from being sent, with the rule
// and line that refused it.
func (r *report) refused(u *url.URL, e *robots.DisallowedError) {
	f := refusal{uri: u.RequestURI()}
	switch {
	case e.Rule != nil:
		f.reason, f.line = e.Rule.String(), e.Rule.Line
		if e.Resolved != "" {
			f.reason += ", as " + e.Resolved
		}
	case e.Unreachable:
		f.reason = "robots.txt unreachable, next try at " + e.RetryAt.Format(time.TimeOnly)
	default:
		f.reason = e.Error()
	}
	r.refusals = append(r.refusals, f)
	r.line("refused", "", u, f.reason)
}

// failed prints a URL that could not be fetched.
func (r *report) failed(u *url.URL, err error) {
	r.errors++
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	r.line("error", "", u, err.Error())
}

func (r *report) line(what, status string, u *url.URL, note string) {
	r.printf("%s\n", strings.TrimRight(fmt.Sprintf("%-8s %3s  %-30s  %s", what, status, u.RequestURI(), note), " "))
}

// summary prints the totals: URLs by status, refusals by rule, errors, and
// what the transport counted.
func (r *report) summary(st robots.Stats) {
	r.printf("\nSummary after %v\n", r.now().Sub(r.began).Round(10*time.Millisecond))

	fetched := 0
	var byStatus []string
	for _, c := range slices.Sorted(maps.Keys(r.statuses)) {
		fetched += r.statuses[c]
		byStatus = append(byStatus, fmt.Sprintf("%d: %d", c, r.statuses[c]))
	}
	r.printf("  fetched  %3d", fetched)
	if fetched > 0 {
		r.printf("  %s", strings.Join(byStatus, ", "))
	}
	r.printf("\n")

	r.printf("  refused  %3d", len(r.refusals))
	type reason struct {
		text  string
		line  int
		count int
	}
	var reasons []reason
	for _, f := range r.refusals {
		if i := slices.IndexFunc(reasons, func(x reason) bool { return x.text == f.reason }); i >= 0 {
			reasons[i].count++
		} else {
			reasons = append(reasons, reason{f.reason, f.line, 1})
		}
	}
	// Rules in file order; "unreachable" (line 0) has no line, so last.
	slices.SortStableFunc(reasons, func(a, b reason) int {
		return cmp.Compare(uint(a.line-1), uint(b.line-1))
	})
	for i, x := range reasons {
		if i > 0 {
			r.printf("\n%14s", "")
		}
		r.printf("  %d by %s", x.count, x.text)
	}
	r.printf("\n  errors   %3d\n", r.errors)

	var fetches []string
	total := int64(0)
	for _, o := range []robots.Outcome{robots.Parsed, robots.Unavailable, robots.Unreachable} {
		if n := st.Fetches[o]; n > 0 {
			total += n
			fetches = append(fetches, fmt.Sprintf("%d %s", n, o))
		}
	}
	r.printf("  robots.txt fetches: %d", total)
	if total > 0 {
		r.printf(" (%s)", strings.Join(fetches, ", "))
	}
	r.printf("\n  waited for politeness: %v\n", st.Waited.Round(10*time.Millisecond))
}

func statusText(code int) string {
	if code == 0 {
		return "no answer"
	}
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

// plural gives "1 group", "2 groups".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
