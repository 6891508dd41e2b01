// Package policy parses robots.txt files and decides, for a crawler's
// product token and a URL path, whether the path may be fetched and why.
//
// Parse turns the bytes of a robots.txt file into an immutable Robots value
// (RFC 9309 section 2): groups of rules keyed by user agent, sitemaps,
// crawl-delays and line-numbered warnings about everything it ignored.
// Allowed answers the yes/no question without allocating; Decide also says
// which rule, on which line, decided and which groups applied.
package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/robots/match"
)

// Robots is a parsed robots.txt file. It is immutable and safe for
// concurrent use; the slices its methods return are shared and must not be
// modified.
type Robots struct {
	groups   []Group
	sitemaps []string
	warnings []Warning
	lines    int

	byAgent map[string]*selection // lower-cased product token
	star    *selection            // the merged "*" groups, or nil
}

// Group is one group of a robots.txt file: consecutive User-agent lines
// and the rules after them (RFC 9309 section 2.1).
type Group struct {
	// Agents are the product tokens of the group's User-agent lines, as
	// written; "*" names every crawler.
	Agents []string
	// Line is the line of the group's first User-agent, EndLine that of its
	// last line before the next group, leaving out blank lines, comments
	// and Sitemap lines, which belong to the whole file.
	Line, EndLine int
	// Rules are the group's valid Allow and Disallow rules in file order.
	Rules []Rule
	// CrawlDelay is the group's Crawl-delay, valid when HasCrawlDelay.
	CrawlDelay    time.Duration
	HasCrawlDelay bool

	compiled []match.Rule // parallel to Rules
}

// Rule is one Allow or Disallow line.
type Rule struct {
	Allow   bool
	Pattern string // as written in the file
	Line    int    // 1-based line number
}

// String returns the rule as it would be written, with its line:
// "Disallow: /private (line 4)".
func (r Rule) String() string {
	return r.Directive() + " (line " + strconv.Itoa(r.Line) + ")"
}

// Directive returns the rule as written in the file: "Disallow: /private".
func (r Rule) Directive() string {
	if r.Allow {
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// Warning is a problem on one line of a robots.txt file. Warned lines are
// ignored or read leniently; they never make Parse fail.
type Warning struct {
	Line    int
	Message string
	// Note reports whether the line is valid but has no effect, such as
	// an empty Disallow beside other rules: worth knowing, not a mistake
	// to fix.
	Note bool
}

// String formats the warning as "line N: message", a note as
// "line N: note: message".
func (w Warning) String() string {
	if w.Note {
		return fmt.Sprintf("line %d: note: %s", w.Line, w.Message)
	}
	return fmt.Sprintf("line %d: %s", w.Line, w.Message)
}

// selection is the merged rule set of every group naming one token.
type selection struct {
	groups   []int
	rules    []Rule // parallel to set's rules
	set      *match.Set
	delay    time.Duration
	hasDelay bool
}

// index merges, for every product token, the groups that name it (RFC 9309
// section 2.2.1), and builds one rule set per distinct merge.
func (r *Robots) index() {
	named := map[string][]int{}
	var star []int
	for i, g := range r.groups {
		for _, a := range g.Agents {
			if a == "*" {
				star = appendOnce(star, i)
				continue
			}
			key := strings.ToLower(a)
			named[key] = appendOnce(named[key], i)
		}
	}
	built := map[string]*selection{}
	r.byAgent = make(map[string]*selection, len(named))
	for token, groups := range named {
		r.byAgent[token] = r.selection(groups, built)
	}
	if star != nil {
		r.star = r.selection(star, built)
	}
}

func appendOnce(list []int, i int) []int {
	if len(list) > 0 && list[len(list)-1] == i {
		return list
	}
	return append(list, i)
}

// selection returns the merged rule set of groups, reusing one already
// built for the same groups, as happens when a group lists many agents.
func (r *Robots) selection(groups []int, built map[string]*selection) *selection {
	key := fmt.Sprint(groups)
	if s, ok := built[key]; ok {
		return s
	}
	s := &selection{groups: groups}
	var compiled []match.Rule
	for _, gi := range groups {
		g := &r.groups[gi]
		if len(groups) == 1 {
			// Nothing to merge: share the group's own immutable slices.
			s.rules, compiled = g.Rules, g.compiled
		} else {
			s.rules = append(s.rules, g.Rules...)
			compiled = append(compiled, g.compiled...)
		}
		if g.HasCrawlDelay && (!s.hasDelay || g.CrawlDelay > s.delay) {
			s.delay, s.hasDelay = g.CrawlDelay, true
		}
	}
	s.set = match.NewSet(compiled)
	built[key] = s
	return s
}

// lookup returns the selection for the first token that has a group, or
// the "*" groups, with the token that chose it ("*" for the fallback).
func (r *Robots) lookup(tokens []string) (*selection, string) {
	if r == nil {
		return nil, ""
	}
	for _, t := range tokens {
		if t == "*" {
			break
		}
		var buf [64]byte
		if len(t) <= len(buf) {
			n := copy(buf[:], t)
			for i := range n {
				if c := buf[i]; 'A' <= c && c <= 'Z' {
					buf[i] = c + 'a' - 'A'
				}
			}
			if s, ok := r.byAgent[string(buf[:n])]; ok {
				return s, t
			}
		} else if s, ok := r.byAgent[strings.ToLower(t)]; ok {
			return s, t
		}
	}
	if r.star == nil {
		return nil, ""
	}
	return r.star, "*"
}

// Allowed reports whether a crawler with the product token may fetch
// pathAndQuery (a path with an optional query, such as "/a/b?x=1"; a
// fragment is ignored). Like Agent.Allowed, it does not allocate for a
// path of up to 2,048 bytes that normalisation does not lengthen.
func (r *Robots) Allowed(token, pathAndQuery string) bool {
	return r.Agent(token).Allowed(pathAndQuery)
}

// Decision is the outcome of Decide, with its explanation.
type Decision struct {
	// Allowed reports whether the path may be fetched.
	Allowed bool
	// Matched reports whether a rule decided; when false the path was
	// allowed because no rule matched, no group applied, or it is
	// /robots.txt itself.
	Matched bool
	// Rule is the deciding rule, valid when Matched.
	Rule Rule
	// Token is the product token whose groups applied, "*" when the
	// fallback groups did, and "" when no group applied.
	Token string
	// Groups are the indexes into Groups of the groups that applied.
	Groups []int
	// Path is the normalised path and query that was matched.
	Path string
	// Resolved is set by DecideRequest when the request-URI was allowed
	// but the same path with its dot segments resolved was refused: that
	// resolved path and query, as ResolveDots gives it.
	Resolved string
}

// String explains the decision in one line, for people.
func (d Decision) String() string {
	verdict := "disallowed"
	if d.Allowed {
		verdict = "allowed"
	}
	switch {
	case d.Matched && d.Resolved != "":
		return verdict + " by " + d.Rule.String() + " once dot segments are resolved: " + d.Resolved
	case d.Matched:
		return verdict + " by " + d.Rule.String()
	case d.Path == "/robots.txt":
		return verdict + ": /robots.txt is always allowed"
	case d.Token == "":
		return verdict + ": no group applies to this crawler"
	}
	return verdict + ": no rule matched"
}

// Decide decides pathAndQuery for a crawler presenting tokens, most
// specific first (such as "Googlebot-Image", "Googlebot"): the groups of
// the first token that has any apply, else the "*" groups (RFC 9309
// section 2.2.1). Within them the longest matching pattern decides, an
// Allow winning a tie; with no match the path is allowed (section 2.2.2),
// and /robots.txt is always allowed. It is shorthand for
// r.Agent(tokens...).Decide(pathAndQuery).
func (r *Robots) Decide(pathAndQuery string, tokens ...string) Decision {
	return r.Agent(tokens...).Decide(pathAndQuery)
}

// DecideRequest is shorthand for r.Agent(tokens...).DecideRequest(requestURI).
func (r *Robots) DecideRequest(requestURI string, tokens ...string) Decision {
	return r.Agent(tokens...).DecideRequest(requestURI)
}

// CrawlDelay is shorthand for r.Agent(tokens...).CrawlDelay().
func (r *Robots) CrawlDelay(tokens ...string) (time.Duration, bool) {
	return r.Agent(tokens...).CrawlDelay()
}

// Groups returns the file's groups in file order.
func (r *Robots) Groups() []Group { return r.groups }

// Sitemaps returns the URLs of every Sitemap line, in file order.
func (r *Robots) Sitemaps() []string { return r.sitemaps }

// Warnings returns every warning, in line order.
func (r *Robots) Warnings() []Warning { return r.warnings }

// Lines returns the number of lines in the file.
func (r *Robots) Lines() int { return r.lines }
