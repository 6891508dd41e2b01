package main

import (
	"fmt"
	"strings"
)

// The transport benchmarks (bench/transport_test.go), in table order.
// Overhead and Parallel each send requests on the stub base round-tripper
// alone and through the transport over it, so that the difference is what
// the transport adds.
const (
	overheadStub  = "TransportOverhead/stub"
	overheadTr    = "TransportOverhead/transport"
	overheadAgent = "TransportOverhead/transport-adds-agent"
	parallelStub  = "TransportParallel/stub"
	parallelTr    = "TransportParallel/transport"
	checkOnly     = "TransportCheck"
)

var transportBenchmarks = []string{overheadStub, overheadTr, overheadAgent, parallelStub, parallelTr, checkOnly}

// transportProcs are the GOMAXPROCS values run.sh passes with -cpu; the
// lock target compares the throughput at the second with the first.
var transportProcs = []int{1, 2}

// minScaling is the least throughput ratio, GOMAXPROCS 2 over 1, that
// shows requests are not serialised: by Amdahl's law, 1.5× on two
// processors means at most a third of a request's work runs one at a time.
const minScaling = 1.5

// writeTransport renders the medians of the transport benchmarks at each
// GOMAXPROCS, the verdict on every transport target, and what a request
// without its own User-Agent costs.
func writeTransport(b *strings.Builder, res *results) error {
	runs := 0
	for _, name := range transportBenchmarks {
		for _, p := range transportProcs {
			k := benchKey{name, p}
			if res.runs(k) == 0 {
				return fmt.Errorf("no results for %s (run.sh runs the transport benchmarks with -cpu 1,2)", k)
			}
			runs = max(runs, res.runs(k))
		}
	}

	fmt.Fprintf(b, "Medians of %d rounds on %s, library at %s; %s cores, cpu %s, %s/%s. ",
		runs, or(res.config["date"]), or(res.config["transport"]), or(res.config["cores"]),
		or(res.config["cpu"]), or(res.config["goos"]), or(res.config["goarch"]))
	b.WriteString("Each round runs every benchmark at GOMAXPROCS 1, then 2 (`-cpu 1,2`).\n\n")
	b.WriteString("| benchmark |")
	for _, unit := range []string{"ns/op", "B/op", "allocs/op"} {
		for _, p := range transportProcs {
			fmt.Fprintf(b, " %s, -cpu %d |", unit, p)
		}
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", 3*len(transportProcs)) + "\n")
	for _, name := range transportBenchmarks {
		b.WriteString("| " + name)
		for _, unit := range []string{"ns/op", "B/op", "allocs/op"} {
			for _, p := range transportProcs {
				b.WriteString(" | " + cell(res, benchKey{name, p}, unit))
			}
		}
		b.WriteString(" |\n")
	}

	b.WriteString("\n" + roundRule + "\n\n")
	b.WriteString("| target | verdict | measured (rounds meeting it) |\n| --- | --- | --- |\n")
	for _, t := range transportTargets {
		v, detail, err := t.check(res)
		if err != nil {
			return fmt.Errorf("target %q: %w", t.name, err)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", t.name, v, detail)
	}
	return writeAddsAgent(b, res)
}

var transportTargets = []target{
	{"the transport adds under 1 µs to a request on a cached origin that carries its own User-Agent (TransportOverhead/transport − stub, ns/op)", func(res *results) (verdict, string, error) {
		return checkAdded(res, overheadTr, "ns/op", " ns", func(d float64) bool { return d < 1000 })
	}},
	{"the transport adds at most 2 allocations to that request (allocs/op)", func(res *results) (verdict, string, error) {
		return checkAdded(res, overheadTr, "allocs/op", "", func(d float64) bool { return d <= 2 })
	}},
	{fmt.Sprintf("requests from many goroutines to many origins are not serialised on one global lock: TransportParallel/transport at -cpu 2 does at least %.1f× the requests per second of -cpu 1", minScaling), checkScaling},
}

// checkAdded checks what the transport adds in unit to a request on the
// stub, benchmark name less TransportOverhead/stub, at every GOMAXPROCS:
// the target must hold at each.
func checkAdded(res *results, name, unit, suffix string, ok func(float64) bool) (verdict, string, error) {
	worst := met
	var parts []string
	for _, p := range transportProcs {
		o, err := compare(res, benchKey{name, p}, benchKey{overheadStub, p}, unit, difference, ok)
		if err != nil {
			return 0, "", err
		}
		worst = max(worst, o.verdict)
		parts = append(parts, fmt.Sprintf("-cpu %d: %s%s%s", p, formatValue(o.value, unit), suffix, o.rounds()))
	}
	return worst, strings.Join(parts, ", "), nil
}

// checkScaling checks the throughput of TransportParallel/transport at the
// highest GOMAXPROCS over that at the lowest, and gives the stub's own
// ratio alongside: what the machine and the allocator allow.
func checkScaling(res *results) (verdict, string, error) {
	lo, hi := transportProcs[0], transportProcs[len(transportProcs)-1]
	o, err := compare(res, benchKey{parallelTr, lo}, benchKey{parallelTr, hi}, "ns/op", quotient,
		func(r float64) bool { return r >= minScaling })
	if err != nil {
		return 0, "", err
	}
	stubLo, stubHi, err := medians(res, benchKey{parallelStub, lo}, benchKey{parallelStub, hi}, "ns/op")
	if err != nil {
		return 0, "", err
	}
	return o.verdict, fmt.Sprintf("-cpu %d over -cpu %d %s%s; the stub alone %s; the machine has %s cores, so this cannot show scaling past %d",
		hi, lo, formatRatio(o.value), o.rounds(), formatRatio(stubLo/stubHi), or(res.config["cores"]), hi), nil
}

// writeAddsAgent writes, apart from the targets, what the transport adds
// to a request without a User-Agent, which it must clone to set one.
func writeAddsAgent(b *strings.Builder, res *results) error {
	var parts []string
	for _, p := range transportProcs {
		var added [3]float64
		for i, unit := range []string{"ns/op", "allocs/op", "B/op"} {
			a, s, err := medians(res, benchKey{overheadAgent, p}, benchKey{overheadStub, p}, unit)
			if err != nil {
				return err
			}
			added[i] = a - s
		}
		parts = append(parts, fmt.Sprintf("%s ns and %s allocations (%s bytes) at -cpu %d",
			formatValue(added[0], "ns/op"), formatValue(added[1], "allocs/op"), formatValue(added[2], "B/op"), p))
	}
	fmt.Fprintf(b, "\nA request without its own User-Agent (%s) is not what the targets measure: the transport adds to it %s: it clones the request to set Options.UserAgent, as a RoundTripper must not modify the request it is given.\n",
		overheadAgent, strings.Join(parts, ", and "))
	return nil
}
