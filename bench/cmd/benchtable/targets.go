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
			k, err := res.only(base + oursSuffix)
			if err != nil {
				return 0, "", err
			}
			allocs, ok := res.median(k, "allocs/op")
			if !ok {
				return 0, "", fmt.Errorf("no allocs/op for %s (run with -benchmem)", k.name)
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
	b.WriteString("\n" + roundRule + "\n\n")
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

// roundRule explains the verdicts under both tables.
const roundRule = "A target on a ratio or a difference is met when that of the medians meets it and so does that within at least two thirds of the rounds (run.sh runs every benchmark once per round, so the two sides of a comparison in one round ran close together, under the same load)."

// checkRatio checks the ns/op ratio of benchmark num over den with ok;
// each must have run at one GOMAXPROCS.
func checkRatio(res *results, num, den, label string, ok func(float64) bool) (verdict, string, error) {
	n, err := res.only(num)
	if err != nil {
		return 0, "", err
	}
	d, err := res.only(den)
	if err != nil {
		return 0, "", err
	}
	o, err := compare(res, n, d, "ns/op", quotient, ok)
	if err != nil {
		return 0, "", err
	}
	return o.verdict, label + formatRatio(o.value) + o.rounds(), nil
}

func quotient(x, y float64) float64   { return x / y }
func difference(x, y float64) float64 { return x - y }

// outcome is a comparison of two benchmarks judged against a target.
type outcome struct {
	verdict verdict
	// value is the comparison of the medians.
	value float64
	// meeting of total rounds meet the target on their own samples.
	meeting, total int
}

// rounds formats how many rounds meet the target: " (5 of 6)".
func (o outcome) rounds() string { return fmt.Sprintf(" (%d of %d)", o.meeting, o.total) }

// compare applies f to the medians of a and b in unit, and to the samples
// of every round, and judges each result with ok. Sample i of every
// benchmark comes from round i.
func compare(res *results, a, b benchKey, unit string, f func(x, y float64) float64, ok func(float64) bool) (outcome, error) {
	ma, mb, err := medians(res, a, b, unit)
	if err != nil {
		return outcome{}, err
	}
	as, bs := res.samples[a][unit], res.samples[b][unit]
	o := outcome{value: f(ma, mb), total: min(len(as), len(bs))}
	for i := range o.total {
		if ok(f(as[i], bs[i])) {
			o.meeting++
		}
	}
	switch {
	case !ok(o.value):
		o.verdict = missed
	case 3*o.meeting < 2*o.total:
		o.verdict = noisy
	}
	return o, nil
}

// medians returns the medians of a and b in unit, failing unless both
// have samples in it.
func medians(res *results, a, b benchKey, unit string) (float64, float64, error) {
	ma, okA := res.median(a, unit)
	mb, okB := res.median(b, unit)
	if !okA || !okB {
		return 0, 0, fmt.Errorf("need %s of both %s and %s (run.sh runs with -benchmem)", unit, a, b)
	}
	return ma, mb, nil
}
