package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/robots/policy"
)

const file = `User-agent: *
Disallow: /
Noindex: /x

User-agent: a
Disallow: /private
Disalow: /typo
Disallow: /two words
`

// TestDecide checks the explanation and that only the warnings of the
// lines involved (the applied groups and the deciding rule) that can
// concern the URL are attached: a finding on a rule's pattern only to
// the paths that rule, read as meant, could match.
func TestDecide(t *testing.T) {
	r := policy.Parse([]byte(file))
	tests := []struct {
		name, url, token string
		allowed          bool
		rule             *Rule
		groupLine        int
		warnLines        []int
		resolved         string // the other form that was refused
	}{
		{"named group", "/private/x", "a", false, &Rule{"disallow", "/private", 6}, 5, nil, ""},
		{"fallback group", "https://e.example/y", "other", false, &Rule{"disallow", "/", 2}, 1, []int{3}, ""},
		{"no rule matched", "/public", "a", true, nil, 5, nil, ""},
		{"dot segments resolved", "/public/../private", "a", false, &Rule{"disallow", "/private", 6}, 5, nil, "/private"},
		{"escaped slash decoded", "/public/..%2fprivate", "a", false, &Rule{"disallow", "/private", 6}, 5, nil, "/private"},
		{"a misspelt rule's finding concerns its paths", "/typo/x", "a", false, &Rule{"disallow", "/typo", 7}, 5, []int{7}, ""},
		{"an ignored rule's finding concerns the paths it was meant for", "/two%20words/x", "a", true, nil, 5, []int{8}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(r, tt.url, tt.token)
			if d.Allowed != tt.allowed || (d.Rule == nil) != (tt.rule == nil) || d.Rule != nil && *d.Rule != *tt.rule {
				t.Errorf("Decide = %+v (rule %+v), want allowed=%v rule %+v", d, d.Rule, tt.allowed, tt.rule)
			}
			if len(d.Groups) != 1 || d.Groups[0].Line != tt.groupLine {
				t.Errorf("groups %+v, want the one on line %d", d.Groups, tt.groupLine)
			}
			var lines []int
			for _, w := range d.Warnings {
				lines = append(lines, w.Line)
			}
			if !slices.Equal(lines, tt.warnLines) {
				t.Errorf("warnings on lines %v, want %v", lines, tt.warnLines)
			}
			if d.Resolved != tt.resolved {
				t.Errorf("Resolved = %q, want %q", d.Resolved, tt.resolved)
			}
		})
	}
}

// TestDecideBadURL checks that an unreadable URL is reported, not decided.
func TestDecideBadURL(t *testing.T) {
	d := Decide(policy.Parse([]byte(file)), "ftp://e.example/", "a")
	if d.Error == "" || d.Allowed {
		t.Errorf("Decide(ftp URL) = %+v, want an error", d)
	}
	b, err := json.Marshal(d)
	if err != nil || !strings.Contains(string(b), `"groups":[]`) {
		t.Errorf("JSON %s (%v): groups must be an empty list, not null", b, err)
	}
}

// TestDecideKeepsTheDecidingRulesFinding checks that the finding of the
// rule that decided is attached even when the rule as meant would not
// match: the path holds the entity the pattern holds.
func TestDecideKeepsTheDecidingRulesFinding(t *testing.T) {
	r := policy.Parse([]byte("User-agent: *\nDisallow: /a&lt;b\n"))
	d := Decide(r, "/a&lt;b", "a")
	if d.Allowed || len(d.Warnings) != 1 || d.Warnings[0].Line != 2 {
		t.Errorf("Decide = allowed %v, warnings %+v; want refused by line 2, with its finding", d.Allowed, d.Warnings)
	}
}
