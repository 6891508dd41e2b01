package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is benchmark output in the shape go test prints it, with every
// benchmark the targets need, two runs each.
const sample = `date: 2026-01-02
cores: 2
library: 0123abc
goos: linux
goarch: amd64
pkg: github.com/crawlkit/robots/bench
cpu: Test CPU
BenchmarkParse/corpus/ours-2 10 100 ns/op 20.00 MB/s 2.5 held/byte 3000 heldB/file 50 B/op 5 allocs/op
BenchmarkParse/corpus/ours-2 10 300 ns/op 10.00 MB/s 2.5 held/byte 5000 heldB/file 50 B/op 5 allocs/op
BenchmarkParse/corpus/peer-2 10 400 ns/op 5.00 MB/s 4 held/byte 6000 heldB/file 60 B/op 6 allocs/op
BenchmarkParse/corpus/peer-2 10 400 ns/op 5.00 MB/s 4 held/byte 6000 heldB/file 60 B/op 6 allocs/op
BenchmarkParse/typical/ours-2 10 100 ns/op 3.5 held/byte 1 B/op 1 allocs/op
BenchmarkParse/typical/peer-2 10 150 ns/op 13 held/byte 1 B/op 1 allocs/op
BenchmarkParse/oracle/ours-2 10 100 ns/op 1 B/op 1 allocs/op
BenchmarkParse/oracle/peer-2 10 300 ns/op 1 B/op 1 allocs/op
BenchmarkParse/rules20k/ours-2 10 100 ns/op 1 B/op 1 allocs/op
BenchmarkParse/rules20k/peer-2 10 90 ns/op 1 B/op 1 allocs/op
BenchmarkParse/wild20k/ours-2 10 100 ns/op 1 B/op 1 allocs/op
BenchmarkParse/wild20k/peer-2 10 90 ns/op 1 B/op 1 allocs/op
BenchmarkDecide/corpus/ours-2 10 20 ns/op 0 B/op 0 allocs/op
BenchmarkDecide/corpus/peer-2 10 2000 ns/op 16 B/op 1 allocs/op
BenchmarkDecide/typical/ours-2 10 12.5 ns/op 0 B/op 0 allocs/op
BenchmarkDecide/typical/peer-2 10 1234567 ns/op 16 B/op 1 allocs/op
BenchmarkDecide/rules20k/ours-2 10 50 ns/op 0 B/op 0 allocs/op
BenchmarkDecide/rules20k/peer-2 10 9000 ns/op 16 B/op 1 allocs/op
BenchmarkDecide/oracle/ours-2 10 50 ns/op 0 B/op 0 allocs/op
BenchmarkDecide/oracle/peer-2 10 9000 ns/op 16 B/op 1 allocs/op
BenchmarkDecide/wild20k/ours-2 10 250 ns/op 0 B/op 1 allocs/op
BenchmarkDecide/wild20k/peer-2 10 9000 ns/op 16 B/op 1 allocs/op
PASS
ok  	github.com/crawlkit/robots/bench	1.0s
`

func TestSplitProcs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     benchKey
	}{
		{"GOMAXPROCS suffix is split off", "Decide/typical/ours-2", benchKey{"Decide/typical/ours", 2}},
		{"no suffix means GOMAXPROCS 1", "Decide/typical/ours", benchKey{"Decide/typical/ours", 1}},
		{"dash inside an element is kept", "Decide/rules-20k/ours", benchKey{"Decide/rules-20k/ours", 1}},
		{"dash before a later element is kept", "Decide/a-2/ours", benchKey{"Decide/a-2/ours", 1}},
		{"dash and number in the last element split", "TransportOverhead/transport-adds-agent-2", benchKey{"TransportOverhead/transport-adds-agent", 2}},
		{"zero is not a GOMAXPROCS", "X/ours-0", benchKey{"X/ours-0", 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := splitProcs(tc.in); got != tc.want {
				t.Errorf("splitProcs(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	res, err := parseOutput(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bench, unit string
		procs             int
		want              float64
		ok                bool
	}{
		{"even count averages the middle two", "Parse/corpus/ours", "ns/op", 2, 200, true},
		{"odd count takes the middle", "Decide/typical/ours", "ns/op", 2, 12.5, true},
		{"every unit is kept", "Parse/corpus/peer", "MB/s", 2, 5, true},
		{"missing unit is reported", "Decide/corpus/ours", "MB/s", 2, 0, false},
		{"missing benchmark is reported", "Decide/stars/ours", "ns/op", 2, 0, false},
		{"other GOMAXPROCS is another benchmark", "Parse/corpus/ours", "ns/op", 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := res.median(benchKey{tc.bench, tc.procs}, tc.unit)
			if got != tc.want || ok != tc.ok {
				t.Errorf("median(%s-%d, %s) = %v, %t; want %v, %t", tc.bench, tc.procs, tc.unit, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestOnly(t *testing.T) {
	res, err := parseOutput(strings.NewReader("BenchmarkX/ours 10 1 ns/op\nBenchmarkY/ours 10 1 ns/op\nBenchmarkY/ours-2 10 1 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bench string
		want        benchKey
		ok          bool
	}{
		{"one GOMAXPROCS gives its key", "X/ours", benchKey{"X/ours", 1}, true},
		{"two GOMAXPROCS values are an error", "Y/ours", benchKey{}, false},
		{"a benchmark that did not run is an error", "Z/ours", benchKey{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := res.only(tc.bench)
			if got != tc.want || (err == nil) != tc.ok {
				t.Errorf("only(%s) = %v, %v; want %v and error %t", tc.bench, got, err, tc.want, !tc.ok)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		name, unit, want string
		v                float64
	}{
		{"thousands are grouped", "ns/op", "1,234,567", 1234567},
		{"small fractions keep two decimals", "ns/op", "2.50", 2.5},
		{"fractions under 100 keep one decimal", "ns/op", "12.5", 12.5},
		{"larger values are rounded", "ns/op", "791", 790.6},
		{"throughput keeps two decimals", "MB/s", "180.00", 180},
		{"a negative difference keeps its grouping", "ns/op", "−123", -123},
		{"a large negative difference keeps its grouping", "ns/op", "−1,234", -1234},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatValue(tc.v, tc.unit); got != tc.want {
				t.Errorf("formatValue(%v, %s) = %q, want %q", tc.v, tc.unit, got, tc.want)
			}
		})
	}
}

func TestParseOutputRejectsMalformedResults(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"value without unit", "BenchmarkX/ours-2 10 100 ns/op 5\n"},
		{"value not a number", "BenchmarkX/ours-2 10 fast ns/op\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseOutput(strings.NewReader(tc.in)); err == nil {
				t.Errorf("parseOutput(%q) succeeded", tc.in)
			}
		})
	}
}

func TestWriteComparison(t *testing.T) {
	res, err := parseOutput(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeComparison(&b, res); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, tc := range []struct{ name, want string }{
		{"header names the configuration", "Medians of 2 runs on 2026-01-02, library at 0123abc; 2 cores, cpu Test CPU, linux/amd64."},
		{"rows put ours and peer side by side with the ratio and what is held", "| Parse/corpus | 200 | 400 | 2.00× | 50 | 60 | 5 | 6 | 15.00 | 5.00 | 4,000 | 6,000 | 2.50 | 4.00 |"},
		{"large values group thousands and missing units show a dash", "| Decide/typical | 12.5 | 1,234,567 | 98765× | 0 | 16 | 0 | 1 | — | — | — | — | — | — |"},
		{"decision speed target is met at 10× or more", "| a decision on a typical file is at least 10× faster than the peer's | met | peer/ours 98765× (1 of 1) |"},
		{"allocation target lists every decision benchmark and misses on one", "| **missed** | Decide/corpus 0, Decide/typical 0, Decide/oracle 0, Decide/rules20k 0, Decide/wild20k 1 allocs/op |"},
		{"corpus parse target is missed below 3×", "| parsing the corpus is at least 3× as fast as the peer | **missed** | peer/ours 2.00× (1 of 2) |"},
		{"oracle parse target is met at 2× or more", "| parsing docs.oracle.com is at least 2× as fast as the peer | met | peer/ours 3.00× (1 of 1) |"},
		{"allocation count is compared with the count before", "fewer allocations than before issue 10 (376,392) | met | allocs/op 5 (2 of 2) |"},
		{"held memory of a typical file is missed above 3×", "at most 3× its size in memory | **missed** | held/size 3.50 (0 of 1) |"},
		{"held memory of the corpus is compared with the peer's", "less memory than the peer's | met | ours/peer 0.67× (2 of 2) |"},
		{"large-file targets compare with the typical decision", "takes at most 10× a typical one | **missed** | rules20k/typical 4.00× (1 of 1), wild20k/typical 20.0× (0 of 1) |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(table, tc.want) {
				t.Errorf("table lacks %q:\n%s", tc.want, table)
			}
		})
	}
}

func TestCheckRatio(t *testing.T) {
	atLeastOne := func(r float64) bool { return r >= 1 }
	for _, tc := range []struct {
		name       string
		peer, ours string // ns/op of each round
		want       verdict
		detail     string
	}{
		{"met when the medians and every round meet it", "300 300 300", "100 200 250", met, "1.50× (3 of 3)"},
		{"met when two thirds of the rounds meet it", "300 300 300", "100 200 350", met, "1.50× (2 of 3)"},
		{"missed when the medians miss it", "100 100 100", "90 200 300", missed, "0.50× (1 of 3)"},
		{"within noise when only the medians meet it", "350 190 290", "100 200 300", noisy, "1.45× (1 of 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in strings.Builder
			for i, p := range strings.Fields(tc.peer) {
				fmt.Fprintf(&in, "BenchmarkX/peer-2 10 %s ns/op\nBenchmarkX/ours-2 10 %s ns/op\n", p, strings.Fields(tc.ours)[i])
			}
			res, err := parseOutput(strings.NewReader(in.String()))
			if err != nil {
				t.Fatal(err)
			}
			v, detail, err := checkRatio(res, "X/peer", "X/ours", "", atLeastOne)
			if err != nil || v != tc.want || detail != tc.detail {
				t.Errorf("checkRatio = %v, %q, %v; want %v, %q", v, detail, err, tc.want, tc.detail)
			}
		})
	}
}

func TestWriteComparisonNeedsPairs(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no ours benchmark", "BenchmarkX/peer-2 10 100 ns/op\n"},
		{"ours without peer", "BenchmarkX/ours-2 10 100 ns/op\n"},
		{"ours at two GOMAXPROCS values", "BenchmarkX/ours 10 100 ns/op\nBenchmarkX/ours-2 10 100 ns/op\nBenchmarkX/peer-2 10 100 ns/op\n"},
		{"target benchmark missing", "BenchmarkX/ours-2 10 100 ns/op\nBenchmarkX/peer-2 10 100 ns/op\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseOutput(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := writeComparison(&b, res); err == nil {
				t.Errorf("writeComparison succeeded:\n%s", b.String())
			}
		})
	}
}

func TestRunWritesBetweenMarkers(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "bench.txt")
	if err := os.WriteFile(input, []byte(sample+transportSample), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := parseOutput(strings.NewReader(sample + transportSample))
	if err != nil {
		t.Fatal(err)
	}
	var comparison, transport strings.Builder
	if err := writeComparison(&comparison, res); err != nil {
		t.Fatal(err)
	}
	if err := writeTransport(&transport, res); err != nil {
		t.Fatal(err)
	}
	cmp, tr := blocks[0], blocks[1]
	for _, tc := range []struct {
		name, doc, want string // want "" when run must fail
	}{
		{"both tables replace the text between their markers",
			"# Title\n\n" + cmp.begin + "old table\n" + cmp.end + "\nmiddle\n" + tr.begin + "old\n" + tr.end + "after\n",
			"# Title\n\n" + cmp.begin + comparison.String() + cmp.end + "\nmiddle\n" + tr.begin + transport.String() + tr.end + "after\n"},
		{"the order of the blocks in the file does not matter",
			tr.begin + tr.end + cmp.begin + cmp.end,
			tr.begin + transport.String() + tr.end + cmp.begin + comparison.String() + cmp.end},
		{"a file without markers is an error", "# no markers\n", ""},
		{"a file without the transport markers is an error", cmp.begin + cmp.end, ""},
		{"an end marker before its begin marker is an error", cmp.begin + cmp.end + tr.end + tr.begin, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			readme := filepath.Join(t.TempDir(), "README.md")
			if err := os.WriteFile(readme, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			err := run(readme, []string{input}, nil, nil)
			if tc.want == "" {
				if err == nil {
					t.Error("run succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(readme); err != nil || string(got) != tc.want {
				t.Errorf("README after -w (%v):\n%s\nwant:\n%s", err, got, tc.want)
			}
		})
	}
}

func TestRunPrintsBothTables(t *testing.T) {
	var out strings.Builder
	if err := run("", nil, strings.NewReader(sample+transportSample), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Parse/corpus | 200 | 400 |", "| TransportCheck | 1,200 | 1,100 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
