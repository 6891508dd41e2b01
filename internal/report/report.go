// Package report holds the JSON shapes that the robotstxt command's -json
// output and the explorer's API share, and builds them from policy values.
package report

import (
	"sort"

	"github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// Rule is a deciding rule.
type Rule struct {
	Type    string `json:"type"` // "allow" or "disallow"
	Pattern string `json:"pattern"`
	Line    int    `json:"line"`
}

// Group is a group of a robots.txt file, by its line span.
type Group struct {
	Agents  []string `json:"agents"`
	Line    int      `json:"line"`
	EndLine int      `json:"endLine"`
}

// Warning is a lint warning on one line, or a note when Note is set: a
// valid line with no effect, which fails no check.
type Warning struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
	Note    bool   `json:"note,omitempty"`
}

// Decision is the outcome for one URL.
type Decision struct {
	URL      string    `json:"url"`
	Path     string    `json:"path,omitempty"`     // normalised path and query
	Resolved string    `json:"resolved,omitempty"` // the form a server serves that was refused
	Allowed  bool      `json:"allowed"`
	Rule     *Rule     `json:"rule,omitempty"`  // nil when no rule matched
	Token    string    `json:"token,omitempty"` // token whose groups applied; "*" for the fallback
	Groups   []Group   `json:"groups"`
	Reason   string    `json:"reason"`             // the verdict and why, policy.Decision.String
	Why      string    `json:"-"`                  // why alone, policy.Decision.Reason
	Warnings []Warning `json:"warnings,omitempty"` // warnings on the lines involved
	Error    string    `json:"error,omitempty"`    // the URL could not be read
}

// Decide decides rawURL (a path or an http(s) URL) for tokens as the
// transport would (see policy.Robots.Decide) and explains the outcome,
// with the warnings of the lines involved: the deciding rule and the
// groups that applied.
func Decide(r *policy.Robots, rawURL string, tokens ...string) Decision {
	out := Decision{URL: rawURL, Groups: []Group{}}
	path, err := target.Target(rawURL)
	if err != nil {
		out.Error = err.Error()
		out.Reason, out.Why = out.Error, out.Error
		return out
	}
	d := r.Decide(path, tokens...)
	out.Path, out.Resolved, out.Allowed, out.Token = d.Path, d.Resolved, d.Allowed, d.Token
	out.Reason, out.Why = d.String(), d.Reason()
	if d.Matched {
		out.Rule = ruleOf(d.Rule)
	}
	groups := r.Groups()
	// The applied groups are in file order and do not overlap, so a
	// binary search finds the one that could hold a line.
	involved := func(line int) bool {
		if d.Matched && line == d.Rule.Line {
			return true
		}
		i := sort.Search(len(d.Groups), func(k int) bool { return groups[d.Groups[k]].EndLine >= line })
		return i < len(d.Groups) && groups[d.Groups[i]].Line <= line
	}
	for _, gi := range d.Groups {
		out.Groups = append(out.Groups, groupOf(groups[gi]))
	}
	for _, w := range r.Warnings() {
		if involved(w.Line) {
			out.Warnings = append(out.Warnings, Warning(w))
		}
	}
	return out
}

func ruleOf(r policy.Rule) *Rule {
	t := "disallow"
	if r.Allow {
		t = "allow"
	}
	return &Rule{Type: t, Pattern: r.Pattern, Line: r.Line}
}

func groupOf(g policy.Group) Group {
	return Group{Agents: g.Agents, Line: g.Line, EndLine: g.EndLine}
}

// Warnings returns every warning of r.
func Warnings(r *policy.Robots) []Warning {
	out := make([]Warning, 0, len(r.Warnings()))
	for _, w := range r.Warnings() {
		out = append(out, Warning(w))
	}
	return out
}

// Groups returns every group of r.
func Groups(r *policy.Robots) []Group {
	out := make([]Group, 0, len(r.Groups()))
	for _, g := range r.Groups() {
		out = append(out, groupOf(g))
	}
	return out
}
