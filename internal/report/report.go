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

// Warning is a lint finding on one line, with its severity: "error",
// "warning" or "note" (policy.Severity).
type Warning struct {
	Line     int    `json:"line"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
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
	Warnings []Warning `json:"warnings,omitempty"` // warnings on the lines involved that can concern the URL
	Error    string    `json:"error,omitempty"`    // the URL could not be read
	// Preferences are the URL's AI usage preferences, one per label; nil
	// when the file has no Content-Usage or Content-Signal line.
	Preferences []Preference `json:"preferences,omitempty"`
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
	var prefLines map[int]bool
	out.Preferences, prefLines = preferencesOf(r, path, tokens)
	for _, w := range r.Warnings() {
		// A finding on another rule's pattern is listed only when that
		// rule, as its author meant it, could decide this path.
		if involved(w.Line) && (d.Matched && w.Line == d.Rule.Line || r.Concerns(w, d.Path)) || prefLines[w.Line] {
			out.Warnings = append(out.Warnings, warningOf(w))
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
		out = append(out, warningOf(w))
	}
	return out
}

func warningOf(w policy.Warning) Warning {
	return Warning{Line: w.Line, Message: w.Message, Severity: w.Severity.String()}
}

// Groups returns every group of r.
func Groups(r *policy.Robots) []Group {
	out := make([]Group, 0, len(r.Groups()))
	for _, g := range r.Groups() {
		out = append(out, groupOf(g))
	}
	return out
}

// Preference is a URL's AI usage preference for one label:
// policy.Preference.
type Preference struct {
	Label string           `json:"label"` // "train-ai", "search", "ai-input"
	Value string           `json:"value"` // "y", "n" or "unknown"
	From  []PreferenceLine `json:"from"`  // the lines stating Value
	// Resolved is the form of the URL that gave Value when it is not
	// the path as sent ("/ai/x" for "/public/../ai/x"), else empty.
	Resolved string `json:"resolved,omitempty"`
}

// PreferenceLine is a line that states a preference.
type PreferenceLine struct {
	Source    string `json:"source"` // "Content-Usage" or "Content-Signal"
	Line      int    `json:"line"`
	Directive string `json:"directive"` // the line as written
}

// preferencesOf returns the preferences of pathAndQuery for tokens, and
// the lines of the file that apply to them (those of the crawler's groups
// and of the whole file), whose warnings concern the answer; none when
// the file has no preference line.
func preferencesOf(r *policy.Robots, pathAndQuery string, tokens []string) ([]Preference, map[int]bool) {
	if !r.HasPreferences() {
		return nil, nil
	}
	p := r.Preferences(pathAndQuery, tokens...)
	lines := make(map[int]bool)
	out := make([]Preference, 0, len(p.Labels))
	for _, x := range p.Labels {
		pr := Preference{Label: x.Label, Value: x.Usage.String(), From: []PreferenceLine{}, Resolved: x.Resolved}
		for _, l := range x.From {
			pr.From = append(pr.From, PreferenceLine{Source: l.Source.String(), Line: l.Line, Directive: l.Directive()})
			lines[l.Line] = true
		}
		out = append(out, pr)
	}
	for _, l := range r.ContentSignals() {
		lines[l.Line] = true
	}
	return out, lines
}
