// Package cases reads and runs release checks: a robots.txt file and a CSV
// of URLs with the decision each must get (the format of the conformance
// suites in testdata/conformance).
package cases

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// Case is one row of a cases.csv file.
type Case struct {
	Agent    string
	URL      string
	Expected bool // allowed
	Note     string
	Line     int // line of the row in its CSV file
	// Invalid says why the row cannot be run (an expected value that is
	// neither allowed nor disallowed, no agent, a bad preference cell,
	// broken CSV), or is nil. Such a row fails; the other rows still run.
	Invalid error
	// ExpectedPreferences are the combined preferences the row expects,
	// one per preference column it fills (see PreferenceLabels).
	ExpectedPreferences []Expected
}

// Result is a case and what the policy decided for it.
type Result struct {
	Case
	Decision policy.Decision
	// Preferences is the answer for the URL, read only when the case
	// expects some.
	Preferences policy.Preferences
	Err         error // the URL could not be read
}

// Passed reports whether the row could be run and its decision, and
// every preference it expects, is the one expected.
func (r Result) Passed() bool {
	return r.Invalid == nil && r.Err == nil && r.Decision.Allowed == r.Expected && len(r.PreferencesDiffering()) == 0
}

// Read parses a cases CSV with the header agent,url,expected[,note],
// optionally followed by preference columns (see PreferenceLabels). Only
// a missing or incomplete header is an error: a row that cannot be run is
// returned with its Invalid set, so that the others still run.
func Read(r io.Reader) ([]Case, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"agent", "url", "expected"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("header has no %q column (want agent,url,expected,note)", need)
		}
	}
	var out []Case
	for {
		before := cr.InputOffset()
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		var syntax *csv.ParseError
		if errors.As(err, &syntax) {
			// The reader resumes after the broken record; one that
			// consumed nothing would fail the same way forever.
			out = append(out, Case{Line: syntax.StartLine, Invalid: fmt.Errorf("broken CSV: %w", syntax.Err)})
			if cr.InputOffset() == before {
				return out, nil
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		c := Case{Agent: get("agent"), URL: get("url"), Note: get("note"), Line: line}
		c.ExpectedPreferences, c.Invalid = preferenceColumns(get)
		switch strings.ToLower(strings.TrimSpace(get("expected"))) {
		case "allowed", "allow":
			c.Expected = true
		case "disallowed", "disallow":
		default:
			if c.Invalid == nil {
				c.Invalid = fmt.Errorf("expected is %q, want allowed or disallowed", get("expected"))
			}
		}
		if c.Invalid == nil && strings.TrimSpace(c.Agent) == "" {
			c.Invalid = errors.New("agent is empty: give a crawler's product token, or * for the * groups")
		}
		out = append(out, c)
	}
}

// Token returns the crawler an agent cell names, as the transport reads
// a User-Agent: its product token ("Googlebot/2.1" is Googlebot, spaces
// around it aside), "*" for the * groups, and the cell as written when
// it starts with no token character (a crawler no group names).
func Token(agent string) string {
	a := strings.TrimSpace(agent)
	if t := policy.ProductToken(a); t != "" {
		return t
	}
	return a
}

// Run decides every case against r, as the transport would decide it.
func Run(r *policy.Robots, cs []Case) []Result {
	out := make([]Result, len(cs))
	for i, c := range cs {
		out[i].Case = c
		if c.Invalid != nil {
			continue
		}
		path, err := target.Target(c.URL)
		if err != nil {
			out[i].Err = err
			continue
		}
		agent := Token(c.Agent)
		out[i].Decision = r.Decide(path, agent)
		if len(c.ExpectedPreferences) > 0 {
			out[i].Preferences = r.Preferences(path, agent)
		}
	}
	return out
}

// Suite is a robots.txt file with its cases file.
type Suite struct {
	Robots, Cases string // file paths
}

// Find returns every suite under dir: each folder holding both robots.txt
// and cases.csv, in path order.
func Find(dir string) ([]Suite, error) {
	var out []Suite
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "cases.csv" {
			return nil
		}
		robots := filepath.Join(filepath.Dir(p), "robots.txt")
		if _, err := os.Stat(robots); err == nil {
			out = append(out, Suite{Robots: robots, Cases: p})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Cases < out[j].Cases })
	return out, err
}

// PreferenceLabels are the optional columns of a cases file after note,
// each a label whose combined preference (policy.Preferences) the row
// expects: y, n or unknown. An empty cell expects nothing.
var PreferenceLabels = []string{"train-ai", "search"}

// Expected is a preference a case expects for one label.
type Expected struct {
	Label string
	Usage policy.Usage
}

// preferenceColumns reads the preference cells of a row through get.
func preferenceColumns(get func(string) string) ([]Expected, error) {
	var out []Expected
	for _, label := range PreferenceLabels {
		var u policy.Usage
		switch v := strings.ToLower(strings.TrimSpace(get(label))); v {
		case "":
			continue
		case "y":
			u = policy.UsageAllowed
		case "n":
			u = policy.UsageDisallowed
		case "unknown":
			u = policy.UsageUnknown
		default:
			return nil, fmt.Errorf("%s is %q, want y, n or unknown", label, get(label))
		}
		out = append(out, Expected{Label: label, Usage: u})
	}
	return out, nil
}

// PreferencesDiffering returns the expected preferences that the answer
// does not give.
func (r Result) PreferencesDiffering() []Expected {
	var out []Expected
	for _, e := range r.ExpectedPreferences {
		if r.Preferences.Label(e.Label).Usage != e.Usage {
			out = append(out, e)
		}
	}
	return out
}
