package policy_test

import (
	"os"
	"testing"

	"github.com/crawlkit/robots/internal/cases"
	"github.com/crawlkit/robots/policy"
)

// decisionModes are the ways a parsed file decides that TestConformance
// holds to the same cases: as Parse leaves it (a pass over the rules for
// the first decisions, then the index), by the index alone, and by passes
// alone.
var decisionModes = []struct {
	name string
	fix  func(*policy.Robots)
}{
	{"lazy", func(*policy.Robots) {}},
	{"index", func(r *policy.Robots) { policy.FixDecisions(r, true) }},
	{"scan", func(r *policy.Robots) { policy.FixDecisions(r, false) }},
}

// TestConformance runs every case of every suite in testdata/conformance,
// in every decision mode.
func TestConformance(t *testing.T) {
	suites, err := cases.Find("../testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) < 48 {
		t.Fatalf("found %d suites, want at least 48", len(suites))
	}
	total := 0
	for _, s := range suites {
		data, err := os.ReadFile(s.Robots)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(s.Cases)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := cases.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", s.Cases, err)
		}
		for _, mode := range decisionModes {
			r := policy.Parse(data)
			mode.fix(r)
			for _, res := range cases.Run(r, cs) {
				total++
				if !res.Passed() {
					t.Errorf("%s:%d (%s): %s %s: got %v (%v), want allowed=%v (%s)", s.Cases, res.Line, mode.name, res.Agent, res.URL, res.Decision.Allowed, res.Decision, res.Expected, res.Note)
				}
			}
		}
	}
	if total < 600*len(decisionModes) {
		t.Errorf("ran %d cases, want at least %d", total, 600*len(decisionModes))
	}
}
