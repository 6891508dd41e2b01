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

// allocsBefore is the allocations of one parse of the corpus before issue
// 10 (library at 936594e), which the parser must stay under.
const allocsBefore = 376392

var targets = []target{
	{"a decision on a typical file is at least 10× faster than the peer's", func(res *results) (verdict, string, error) {
		return checkRatio(res, "Decide/typical"+peerSuffix, "Decide/typical"+oursSuffix, "peer/ours ", func(r float64) bool { return r >= 10 })
	}},
	{"a decision allocates nothing for ASCII paths", func(res *results) (verdict, string, error) {
		v := met
		var parts []string
		for _, base := range []string{"Decide/corpus", "Decide/typical", "Decide/oracle", "Decide/rules20k", "Decide/wild20k"} {
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
	{"parsing the corpus is at least 3× as fast as the peer", func(res *results) (verdict, string, error) {
		return checkRatio(res, "Parse/corpus"+peerSuffix, "Parse/corpus"+oursSuffix, "peer/ours ", func(r float64) bool { return r >= 3 })
	}},
	{"parsing docs.oracle.com is at least 2× as fast as the peer", func(res *results) (verdict, string, error) {
		return checkRatio(res, "Parse/oracle"+peerSuffix, "Parse/oracle"+oursSuffix, "peer/ours ", func(r float64) bool { return r >= 2 })
	}},
	{"parsing the corpus makes fewer allocations than before issue 10 (376,392)", func(res *results) (verdict, string, error) {
		return checkValue(res, "Parse/corpus"+oursSuffix, "allocs/op", "allocs/op ", func(v float64) bool { return v < allocsBefore })
	}},
	{"a parsed typical file holds at most 3× its size in memory", func(res *results) (verdict, string, error) {
		return checkValue(res, "Parse/typical"+oursSuffix, "held/byte", "held/size ", func(v float64) bool { return v <= 3 })
	}},
	{"the parsed corpus holds less memory than the peer's", func(res *results) (verdict, string, error) {
		n, d, err := pair(res, "Parse/corpus"+oursSuffix, "Parse/corpus"+peerSuffix)
		if err != nil {
			return 0, "", err
		}
		o, err := compare(res, n, d, "heldB/file", quotient, func(r float64) bool { return r < 1 })
		if err != nil {
			return 0, "", err
		}
		return o.verdict, "ours/peer " + formatRatio(o.value) + o.rounds(), nil
	}},
	{"a decision on either 20,000-rule file takes at most 10× a typical one", func(res *results) (verdict, string, error) {
		worst := met
		var parts []string
		for _, name := range []string{"rules20k", "wild20k"} {
			v, detail, err := checkRatio(res, "Decide/"+name+oursSuffix, "Decide/typical"+oursSuffix, name+"/typical ", func(r float64) bool { return r <= 10 })
			if err != nil {
				return 0, "", err
			}
			worst = max(worst, v)
			parts = append(parts, detail)
		}
		return worst, strings.Join(parts, ", "), nil
	}},
}

// checkValue checks the median and every round of one benchmark in unit
// with ok.
func checkValue(res *results, name, unit, label string, ok func(float64) bool) (verdict, string, error) {
	k, err := res.only(name)
	if err != nil {
		return 0, "", err
	}
	m, found := res.median(k, unit)
	if !found {
		return 0, "", fmt.Errorf("no %s for %s", unit, name)
	}
	o := outcome{value: m}
	for _, v := range res.samples[k][unit] {
		o.total++
		if ok(v) {
			o.meeting++
		}
	}
	switch {
	case !ok(m):
		o.verdict = missed
	case 3*o.meeting < 2*o.total:
		o.verdict = noisy
	}
	return o.verdict, label + formatValue(m, unit) + o.rounds(), nil
}

// pair returns the keys of benchmarks a and b, each at one GOMAXPROCS.
func pair(res *results, a, b string) (benchKey, benchKey, error) {
	ka, err := res.only(a)
	if err != nil {
		return benchKey{}, benchKey{}, err
	}
	kb, err := res.only(b)
	return ka, kb, err
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
