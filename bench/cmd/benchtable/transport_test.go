package main

import (
	"fmt"
	"strings"
	"testing"
)

// transportSample is transport benchmark output of three rounds, each at
// -cpu 1 and 2, in the shape go test prints it.
const transportSample = `transport: 4567def
goos: linux
goarch: amd64
pkg: github.com/crawlkit/robots/bench
cpu: Test CPU
BenchmarkTransportOverhead/stub 10 100 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport 10 900 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent 10 2100 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub 10 150 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport 10 1800 ns/op 176 B/op 3 allocs/op
BenchmarkTransportCheck 10 1200 ns/op 176 B/op 2 allocs/op
BenchmarkTransportOverhead/stub-2 10 95 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport-2 10 800 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent-2 10 2000 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub-2 10 100 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport-2 10 1000 ns/op 180 B/op 3 allocs/op
BenchmarkTransportCheck-2 10 1100 ns/op 176 B/op 2 allocs/op
BenchmarkTransportOverhead/stub 10 110 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport 10 1200 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent 10 2100 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub 10 150 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport 10 1800 ns/op 176 B/op 3 allocs/op
BenchmarkTransportCheck 10 1200 ns/op 176 B/op 2 allocs/op
BenchmarkTransportOverhead/stub-2 10 95 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport-2 10 850 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent-2 10 2000 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub-2 10 100 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport-2 10 1500 ns/op 180 B/op 3 allocs/op
BenchmarkTransportCheck-2 10 1100 ns/op 176 B/op 2 allocs/op
BenchmarkTransportOverhead/stub 10 90 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport 10 950 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent 10 2100 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub 10 150 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport 10 1800 ns/op 176 B/op 3 allocs/op
BenchmarkTransportCheck 10 1200 ns/op 176 B/op 2 allocs/op
BenchmarkTransportOverhead/stub-2 10 95 ns/op 144 B/op 1 allocs/op
BenchmarkTransportOverhead/transport-2 10 900 ns/op 176 B/op 3 allocs/op
BenchmarkTransportOverhead/transport-adds-agent-2 10 2000 ns/op 1056 B/op 7 allocs/op
BenchmarkTransportParallel/stub-2 10 100 ns/op 144 B/op 1 allocs/op
BenchmarkTransportParallel/transport-2 10 900 ns/op 180 B/op 3 allocs/op
BenchmarkTransportCheck-2 10 1100 ns/op 176 B/op 2 allocs/op
PASS
`

func TestWriteTransport(t *testing.T) {
	res, err := parseOutput(strings.NewReader("date: 2026-01-02\ncores: 2\n" + transportSample))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeTransport(&b, res); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, tc := range []struct{ name, want string }{
		{"header names the rounds and the transport's commit", "Medians of 3 rounds on 2026-01-02, library at 4567def; 2 cores, cpu Test CPU, linux/amd64."},
		{"columns give every unit at each GOMAXPROCS", "| benchmark | ns/op, -cpu 1 | ns/op, -cpu 2 | B/op, -cpu 1 | B/op, -cpu 2 | allocs/op, -cpu 1 | allocs/op, -cpu 2 |"},
		{"GOMAXPROCS values are not mixed", "| TransportOverhead/transport | 950 | 850 | 176 | 176 | 3 | 3 |"},
		{"a benchmark whose name ends in a dash and word keeps it", "| TransportOverhead/transport-adds-agent | 2,100 | 2,000 | 1,056 | 1,056 | 7 | 7 |"},
		{"B/op differing between GOMAXPROCS shows both", "| TransportParallel/transport | 1,800 | 1,000 | 176 | 180 | 3 | 3 |"},
		{"added time is the difference of the medians at each GOMAXPROCS", "(TransportOverhead/transport − stub, ns/op) | met | -cpu 1: 850 ns (2 of 3), -cpu 2: 755 ns (3 of 3) |"},
		{"added allocations are met at two", "at most 2 allocations to that request (allocs/op) | met | -cpu 1: 2 (3 of 3), -cpu 2: 2 (3 of 3) |"},
		{"scaling is the ratio of the medians, with the stub's and the cores", "requests per second of -cpu 1 | met | -cpu 2 over -cpu 1 1.80× (2 of 3); the stub alone 1.50×; the machine has 2 cores, so this cannot show scaling past 2 |"},
		{"adding the User-Agent is reported apart", "the transport adds to it 2,000 ns and 6 allocations (912 bytes) at -cpu 1, and 1,905 ns and 6 allocations (912 bytes) at -cpu 2: it clones the request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(table, tc.want) {
				t.Errorf("table lacks %q:\n%s", tc.want, table)
			}
		})
	}
}

// transportRounds returns go test output holding the ns/op of each named
// benchmark ("TransportOverhead/stub-2"), one round per value; every
// benchmark has the same number of values.
func transportRounds(series map[string]string) string {
	var b strings.Builder
	for name, values := range series {
		for _, v := range strings.Fields(values) {
			fmt.Fprintf(&b, "Benchmark%s 10 %s ns/op\n", name, v)
		}
	}
	return b.String()
}

func TestCheckAdded(t *testing.T) {
	under1µs := func(d float64) bool { return d < 1000 }
	for _, tc := range []struct {
		name       string
		stub1, tr1 string // ns/op of each round, -cpu 1
		stub2, tr2 string // and -cpu 2
		want       verdict
		detail     string
	}{
		{"met when every GOMAXPROCS meets it", "100 100 100", "900 950 990", "90 90 90", "800 800 800", met,
			"-cpu 1: 850 ns (3 of 3), -cpu 2: 710 ns (3 of 3)"},
		{"missed when one GOMAXPROCS misses it", "100 100 100", "900 900 900", "90 90 90", "1100 1100 1000", missed,
			"-cpu 1: 800 ns (3 of 3), -cpu 2: 1,010 ns (1 of 3)"},
		{"exactly 1 µs is missed", "100 100 100", "1100 1100 1100", "100 100 100", "900 900 900", missed,
			"-cpu 1: 1,000 ns (0 of 3), -cpu 2: 800 ns (3 of 3)"},
		{"within noise when only the medians meet it", "100 500 300", "1200 1200 1500", "100 100 100", "900 900 900", noisy,
			"-cpu 1: 900 ns (1 of 3), -cpu 2: 800 ns (3 of 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseOutput(strings.NewReader(transportRounds(map[string]string{
				overheadStub: tc.stub1, overheadTr: tc.tr1, overheadStub + "-2": tc.stub2, overheadTr + "-2": tc.tr2,
			})))
			if err != nil {
				t.Fatal(err)
			}
			v, detail, err := checkAdded(res, overheadTr, "ns/op", " ns", under1µs)
			if err != nil || v != tc.want || detail != tc.detail {
				t.Errorf("checkAdded = %v, %q, %v; want %v, %q", v, detail, err, tc.want, tc.detail)
			}
		})
	}
}

func TestCheckScaling(t *testing.T) {
	for _, tc := range []struct {
		name       string
		par1, par2 string // ns/op of TransportParallel/transport each round
		want       verdict
		detail     string
	}{
		{"met when throughput grows 1.5× or more", "1500 1500 1500", "1000 900 1000", met, "1.50× (3 of 3)"},
		{"missed when one lock serialises the requests", "1500 1500 1500", "1600 1500 1400", missed, "1.00× (0 of 3)"},
		{"within noise when only the medians meet it", "1200 1500 3000", "1000 1000 2500", noisy, "1.50× (1 of 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseOutput(strings.NewReader("cores: 2\n" + transportRounds(map[string]string{
				parallelTr: tc.par1, parallelTr + "-2": tc.par2, parallelStub: "200 200 200", parallelStub + "-2": "160 160 160",
			})))
			if err != nil {
				t.Fatal(err)
			}
			v, detail, err := checkScaling(res)
			want := "-cpu 2 over -cpu 1 " + tc.detail + "; the stub alone 1.25×; the machine has 2 cores, so this cannot show scaling past 2"
			if err != nil || v != tc.want || detail != want {
				t.Errorf("checkScaling = %v, %q, %v; want %v, %q", v, detail, err, tc.want, want)
			}
		})
	}
}

func TestWriteTransportNeedsEveryBenchmark(t *testing.T) {
	for _, tc := range []struct{ name, drop string }{
		{"a benchmark missing at -cpu 2", "BenchmarkTransportCheck-2 "},
		{"a benchmark missing at -cpu 1", "BenchmarkTransportParallel/stub "},
		{"the stub missing", "BenchmarkTransportOverhead/stub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in strings.Builder
			for _, line := range strings.SplitAfter(transportSample, "\n") {
				if !strings.HasPrefix(line, tc.drop) {
					in.WriteString(line)
				}
			}
			res, err := parseOutput(strings.NewReader(in.String()))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := writeTransport(&b, res); err == nil {
				t.Errorf("writeTransport succeeded:\n%s", b.String())
			}
		})
	}
}

func TestWriteTransportNeedsMemoryStatistics(t *testing.T) {
	var in strings.Builder
	for _, line := range strings.SplitAfter(transportSample, "\n") {
		if ns, _, ok := strings.Cut(line, " ns/op"); ok {
			line = ns + " ns/op\n"
		}
		in.WriteString(line)
	}
	res, err := parseOutput(strings.NewReader(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeTransport(&b, res); err == nil || !strings.Contains(err.Error(), "allocs/op") {
		t.Errorf("writeTransport without -benchmem: %v, want an error naming allocs/op", err)
	}
}
