package main

import (
	"fmt"
	"strings"
)

// verdict is the outcome of checking one target.
type verdict int

const (
	met verdict = iota
	// noisy: the medians meet the target but fewer than two thirds of the
	// rounds do, so the run does not show it.
	noisy
	missed
)

func (v verdict) String() string {
	switch v {
	case met:
		return "met"
	case noisy:
		return "**not shown** (within noise)"
	}
	return "**missed**"
}

// target is one speed goal of the comparison, checked against the results.
type target struct {
	name  string
	check func(res *results) (verdict, string, error)
}

var targets = []target{
	{"a decision on a typical file is at least 10× faster than the peer's", func(res *results) (verdict, string, error) {
		return checkRatio(res, "Decide/typical"+peerSuffix, "Decide/typical"+oursSuffix, "peer/ours ", func(r float64) bool { return r >= 10 })
	}},
	{"a decision allocates nothing for ASCII paths", func(res *results) (verdict, string, error) {
		v := met
		var parts []string
		for _, base := range []string{"Decide/corpus", "Decide/typical", "Decide/rules20k"} {
			allocs, ok := res.median(base+oursSuffix, "allocs/op")
			if !ok {
				return 0, "", fmt.Errorf("no allocs/op for %s (run with -benchmem)", base+oursSuffix)
			}
			if allocs != 0 {
				v = missed
			}
			parts = append(parts, base+" "+formatValue(allocs, "allocs/op"))
		}
		return v, strings.Join(parts, ", ") + " allocs/op", nil
	}},
	{"parsing is at least as fast as the peer's", func(res *results) (verdict, string, error) {
		worst := met
		var parts []string
		for _, base := range []string{"Parse/corpus", "Parse/typical", "Parse/rules20k"} {
			v, detail, err := checkRatio(res, base+peerSuffix, base+oursSuffix, base+" peer/ours ", func(r float64) bool { return r >= 1 })
			if err != nil {
				return 0, "", err
			}
			worst = max(worst, v)
			parts = append(parts, detail)
		}
		return worst, strings.Join(parts, ", "), nil
	}},
	{"a decision on the 20,000-rule file takes at most 10× a typical one", func(res *results) (verdict, string, error) {
		return checkRatio(res, "Decide/rules20k"+oursSuffix, "Decide/typical"+oursSuffix, "rules20k/typical ", func(r float64) bool { return r <= 10 })
	}},
}

// writeTargets writes the verdict on every target as a markdown table.
func writeTargets(b *strings.Builder, res *results) error {
	b.WriteString("\nA target on a ratio is met when the ratio of the medians meets it and so does the ratio within at least two thirds of the rounds (run.sh runs every benchmark once per round, so the two sides of a ratio in one round ran close together, under the same load).\n\n")
	b.WriteString("| target | verdict | measured (rounds meeting it) |\n| --- | --- | --- |\n")
	for _, t := range targets {
		v, detail, err := t.check(res)
		if err != nil {
			return fmt.Errorf("target %q: %w", t.name, err)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", t.name, v, detail)
	}
	return nil
}

// checkRatio checks the ns/op ratio of benchmark num over den with ok,
// both on the medians and round by round: sample i of every benchmark
// comes from round i.
func checkRatio(res *results, num, den, label string, ok func(float64) bool) (verdict, string, error) {
	r, err := ratio(res, num, den, "ns/op")
	if err != nil {
		return 0, "", err
	}
	ns, ds := res.samples[num]["ns/op"], res.samples[den]["ns/op"]
	rounds := min(len(ns), len(ds))
	meeting := 0
	for i := range rounds {
		if ok(ns[i] / ds[i]) {
			meeting++
		}
	}
	v := met
	switch {
	case !ok(r):
		v = missed
	case 3*meeting < 2*rounds:
		v = noisy
	}
	return v, fmt.Sprintf("%s%s (%d of %d)", label, formatRatio(r), meeting, rounds), nil
}

// ratio returns the median of a over that of b in unit.
func ratio(res *results, a, b, unit string) (float64, error) {
	va, okA := res.median(a, unit)
	vb, okB := res.median(b, unit)
	if !okA || !okB || vb == 0 {
		return 0, fmt.Errorf("need %s of both %s and %s", unit, a, b)
	}
	return va / vb, nil
}
