package policy_test

import (
	"os"
	"testing"

	"github.com/crawlkit/robots/internal/cases"
	"github.com/crawlkit/robots/policy"
)

// TestConformance runs every case of every suite in testdata/conformance.
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
		r := policy.Parse(data)
		for _, res := range cases.Run(r, cs) {
			total++
			if !res.Passed() {
				t.Errorf("%s:%d: %s %s: got %v (%v), want allowed=%v (%s)", s.Cases, res.Line, res.Agent, res.URL, res.Decision.Allowed, res.Decision, res.Expected, res.Note)
			}
		}
	}
	if total < 600 {
		t.Errorf("ran %d cases, want at least 600", total)
	}
}
