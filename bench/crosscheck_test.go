package bench

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/crawlkit/robots/policy"
	"github.com/temoto/robotstxt"
)

// filesShown is how many files TestCrossCheck lists, most disagreements
// first, each with its first disagreement.
const filesShown = 12

// TestCrossCheck decides every corpus (file, url) pair with both libraries
// (with -short, only the pairs the benchmarks use: url k against file
// k mod F) and logs how often, and where, they disagree. The peer does not
// follow RFC 9309 to the letter, so disagreeing is not a failure; a panic
// in this project, or Allowed and Decide answering differently, is.
func TestCrossCheck(t *testing.T) {
	c := needCorpus(t)
	type fileCount struct {
		name    string
		count   int
		example string
	}
	var (
		pairs, disagree int
		byFile          []fileCount
	)
	for fi, f := range c.files {
		ours, ok := parseOurs(t, f)
		if !ok {
			continue
		}
		peer, err := robotstxt.FromBytes(f.data)
		if err != nil {
			t.Logf("%s: robotstxt: %v", f.name, err)
			continue
		}
		fc := fileCount{name: f.name}
		for ui, url := range c.urls {
			if testing.Short() && ui%len(c.files) != fi {
				continue
			}
			pairs++
			d, ok := decideOurs(t, f.name, ours, url)
			if !ok {
				break
			}
			if d.Allowed == peer.TestAgent(url, agent) {
				continue
			}
			if fc.count++; fc.count == 1 {
				fc.example = fmt.Sprintf("%s: ours %s; peer allowed=%t", url, d, !d.Allowed)
			}
		}
		disagree += fc.count
		if fc.count > 0 {
			byFile = append(byFile, fc)
		}
	}
	t.Logf("agent %q: %d of %d (file, url) pairs decided differently (%.2f%%), in %d of %d files",
		agent, disagree, pairs, 100*float64(disagree)/float64(max(pairs, 1)), len(byFile), len(c.files))
	slices.SortStableFunc(byFile, func(a, b fileCount) int { return cmp.Compare(b.count, a.count) })
	for _, fc := range byFile[:min(len(byFile), filesShown)] {
		t.Logf("%6d  %s, first: %s", fc.count, fc.name, fc.example)
	}
}

// parseOurs parses f, failing t instead of crashing if Parse panics.
func parseOurs(t *testing.T, f corpusFile) (r *policy.Robots, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s: policy.Parse panicked: %v", f.name, p)
		}
	}()
	return policy.Parse(f.data), true
}

// decideOurs decides url for agent with both Decide and Allowed, failing t
// if either panics or they disagree.
func decideOurs(t *testing.T, name string, r *policy.Robots, url string) (d policy.Decision, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s %s: policy panicked: %v", name, url, p)
		}
	}()
	d = r.Decide(url, agent)
	if a := r.Allowed(url, agent); a != d.Allowed {
		t.Errorf("%s %s: Allowed says %t, Decide says %s", name, url, a, d)
	}
	return d, true
}
