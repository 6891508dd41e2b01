// Package policy parses robots.txt files and decides, for a URL path and a
// crawler's product tokens, whether the path may be fetched and why.
//
// Parse turns the bytes of a robots.txt file into an immutable Robots value
// (RFC 9309 section 2): groups of rules keyed by user agent, sitemaps,
// crawl-delays and line-numbered warnings about everything it ignored.
// Every deciding method takes the path first and the tokens last. Allowed
// answers the yes/no question as the robots transport does, the forms a
// server resolves the path to included, without allocating for ordinary
// paths; Decide also says which rule, on which line, decided and which
// groups applied. AllowedLiteral and DecideLiteral read the path alone.
// Preferences says, beside them, what the site prefers a crawler do with
// the content (its Content-Usage and Content-Signal lines): for each
// label, such as train-ai, y, n or unknown, with the lines it came from.
package policy

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// Robots is a parsed robots.txt file. It is immutable and safe for
// concurrent use; the slices its methods return are shared and must not be
// modified. A crawler's first few lookups of its groups pass over the
// file's User-agent lines, and its first few decisions over the rules of
// its groups; the index of the tokens and the rule index of those groups
// are each built by the use after them, and the Groups by the first call
// of Groups; each is published atomically, so no decision takes a lock.
type Robots struct {
	// text holds every string the file keeps: the rules' patterns, then
	// the agents, then the sitemaps, then the normalised patterns of
	// norms.
	text      string
	groups    []group
	rules     []rule
	norms     []normed // by rule, those whose normalised pattern differs
	agentEnds []uint32 // where each agent ends in text; see agent
	sitemaps  []string
	prefs     []prefLine // the Content-Usage and Content-Signal lines, in file order
	warnings  []Warning
	lines     int
	// findings are the patterns of the rule lines a warning is about,
	// in line order: see Concerns.
	findings []foundPattern

	public atomic.Pointer[[]Group] // nil until the first call of Groups

	// tokens is the index of the groups by product token, nil until a
	// lookup builds it; lookups counts the lookups made without it.
	tokens  atomic.Pointer[tokenIndex]
	lookups atomic.Int32
}

// Group is one group of a robots.txt file: consecutive User-agent lines
// and the rules after them (RFC 9309 section 2.1).
type Group struct {
	// Agents are the product tokens of the group's User-agent lines, as
	// written; "*" names every crawler. A value without a product token
	// ("ü-bot", "*bot", "" for an empty one) is kept as written and names
	// no crawler.
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
	// Preferences are the group's Content-Usage and Content-Signal lines
	// in file order, malformed ones that still apply included.
	Preferences []PreferenceLine
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

// Warning is a finding on one line of a robots.txt file, of one of three
// severities. Warned lines are ignored or read leniently; they never make
// Parse fail.
type Warning struct {
	Line     int
	Message  string
	Severity Severity
}

// Severity says how much a Warning matters to the file's author: an error
// is a mistake to fix, a warning is worth a look, a note is for
// information. A lint that gates a deploy fails on errors and warnings,
// or on errors alone, never on notes. The zero value is SeverityWarning.
type Severity int

const (
	// SeverityWarning marks input that is ignored or read leniently and
	// that a crawler may read differently: a misspelling read as meant
	// ("Dissalow"), a line without a colon read as "field: value", a field
	// RFC 9309 does not define ("Noindex", "Host"), an unknown field not
	// close to a known one, a Crawl-delay that is not a number, a
	// relative Sitemap or one holding an HTML entity, a User-agent that
	// names no crawler.
	SeverityWarning Severity = iota
	// SeverityError marks a line that cannot be what its author meant: a
	// rule before any User-agent line, a misspelt field name that no
	// crawler reads ("User-agnet", which drops a group or moves its rules
	// into the group above), a pattern crawlers ignore (with a space, a
	// "%" not followed by two hex digits, or starting with neither "/"
	// nor "*"), a pattern holding an HTML entity ("&amp;", matched as
	// written).
	SeverityError
	// SeverityNote marks a reading that every major crawler shares, worth
	// knowing but not a mistake: a User-agent value read by its product
	// token ("Googlebot/2.1" as "Googlebot"), an empty Allow, or an empty
	// Disallow beside other rules, which has no effect.
	SeverityNote
)

// String returns "warning", "error" or "note".
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityNote:
		return "note"
	}
	return "warning"
}

// String formats the warning as "line N: message", an error as
// "line N: error: message" and a note as "line N: note: message".
func (w Warning) String() string {
	if w.Severity == SeverityWarning {
		return fmt.Sprintf("line %d: %s", w.Line, w.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", w.Line, w.Severity, w.Message)
}

// Allowed reports whether a crawler presenting tokens may request
// pathAndQuery (a path with an optional query, such as "/a/b?x=1"; a
// fragment is ignored), as the transport decides it. It is shorthand for
// r.Agent(tokens...).Allowed(pathAndQuery).
func (r *Robots) Allowed(pathAndQuery string, tokens ...string) bool {
	return r.Agent(tokens...).Allowed(pathAndQuery)
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
	// fallback groups did, and "" when no group applied or none was
	// needed (/robots.txt).
	Token string
	// Groups are the indexes into Groups of the groups that applied.
	Groups []int
	// Path is the normalised path and query that was matched.
	Path string
	// Resolved is set by Decide when the path as sent was allowed but a
	// form of it that servers serve was refused (its dot segments
	// resolved; its repeated slashes merged and then its dot segments
	// resolved; or, where reading "%2F" as "/" reveals a dot segment, the
	// path a server decoding it serves): that form, as it was decided;
	// Path holds it normalised.
	Resolved string

	robotsTxt bool // allowed as /robots.txt itself
}

// Reason explains the decision for people, without its verdict: "by
// Disallow: /private (line 4)", "no rule matched", "/robots.txt is always
// allowed", "no group names this crawler and there is no * group". It is
// the one explanation that the robotstxt command, the explorer and
// String share.
func (d Decision) Reason() string {
	switch {
	case d.Matched && d.Resolved != "":
		return "by " + d.Rule.String() + " once the path is resolved as servers do: " + d.Resolved
	case d.Matched:
		return "by " + d.Rule.String()
	case d.robotsTxt:
		return "/robots.txt is always allowed"
	case d.Token == "":
		return "no group names this crawler and there is no * group"
	}
	return "no rule matched"
}

// String explains the decision in one line, for people: its verdict and
// its Reason.
func (d Decision) String() string {
	verdict := "disallowed"
	if d.Allowed {
		verdict = "allowed"
	}
	if d.Matched {
		return verdict + " " + d.Reason()
	}
	return verdict + ": " + d.Reason()
}

// Decide decides a request for pathAndQuery by a crawler presenting
// tokens, most specific first (such as "Googlebot-Image", "Googlebot"),
// as the transport does, and explains the decision. It is shorthand for
// r.Agent(tokens...).Decide(pathAndQuery); see Agent and Agent.Decide.
func (r *Robots) Decide(pathAndQuery string, tokens ...string) Decision {
	return r.Agent(tokens...).Decide(pathAndQuery)
}

// CrawlDelay is shorthand for r.Agent(tokens...).CrawlDelay().
func (r *Robots) CrawlDelay(tokens ...string) (time.Duration, bool) {
	return r.Agent(tokens...).CrawlDelay()
}

// Sitemaps returns the URLs of every Sitemap line, in file order.
func (r *Robots) Sitemaps() []string { return r.sitemaps }

// Warnings returns every warning, in line order.
func (r *Robots) Warnings() []Warning { return r.warnings }

// Lines returns the number of lines in the file.
func (r *Robots) Lines() int { return r.lines }
