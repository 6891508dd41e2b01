package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// benchKey names the samples of one benchmark at one GOMAXPROCS: go test
// -cpu 1,2 runs every benchmark twice, and the two must not be mixed.
type benchKey struct {
	name  string // without "Benchmark" and the GOMAXPROCS suffix
	procs int
}

// results holds every sample of a benchmark output, by benchmark and unit.
type results struct {
	// config holds the "key: value" lines, such as goos, cpu, date.
	config map[string]string
	// keys lists the benchmarks in order of first appearance.
	keys    []benchKey
	samples map[benchKey]map[string][]float64
}

// parseOutput reads the output of go test -bench, in the Go benchmark data
// format: configuration lines "key: value" and result lines
// "BenchmarkName-N iterations value unit [value unit ...]". Other lines
// (PASS, ok, logs) are skipped.
func parseOutput(r io.Reader) (*results, error) {
	res := &results{config: map[string]string{}, samples: map[benchKey]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if !strings.HasPrefix(text, "Benchmark") {
			if key, value, ok := strings.Cut(text, ": "); ok && isConfigKey(key) {
				res.config[key] = strings.TrimSpace(value)
			}
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 4 || len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: not a benchmark result: %q", line, text)
		}
		key := splitProcs(strings.TrimPrefix(fields[0], "Benchmark"))
		units, ok := res.samples[key]
		if !ok {
			units = map[string][]float64{}
			res.samples[key] = units
			res.keys = append(res.keys, key)
		}
		for i := 2; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			units[fields[i+1]] = append(units[fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// isConfigKey reports whether key can name a configuration line: in the
// Go benchmark format, a lower-case letter followed by non-space
// characters other than upper-case letters.
func isConfigKey(key string) bool {
	if key == "" || key[0] < 'a' || key[0] > 'z' {
		return false
	}
	return !strings.ContainsFunc(key, func(r rune) bool { return r == ' ' || 'A' <= r && r <= 'Z' })
}

// splitProcs splits the "-N" that go test appends to a benchmark name
// when GOMAXPROCS is N, not 1, from the name.
func splitProcs(name string) benchKey {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return benchKey{name, 1}
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 1 {
		return benchKey{name, 1}
	}
	return benchKey{name[:i], n}
}

// only returns the key of name, failing unless it ran, and at one
// GOMAXPROCS: the comparison table has one column per side, not per
// GOMAXPROCS.
func (r *results) only(name string) (benchKey, error) {
	var found []benchKey
	for _, k := range r.keys {
		if k.name == name {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return benchKey{}, fmt.Errorf("no results for %s", name)
	case 1:
		return found[0], nil
	}
	return benchKey{}, fmt.Errorf("%s ran at %d GOMAXPROCS values, want one", name, len(found))
}

// median returns the median of k's samples in unit, and whether there are
// any.
func (r *results) median(k benchKey, unit string) (float64, bool) {
	vs := slices.Clone(r.samples[k][unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	mid := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[mid], true
	}
	return (vs[mid-1] + vs[mid]) / 2, true
}

// runs returns how many samples k has in ns/op.
func (r *results) runs(k benchKey) int { return len(r.samples[k]["ns/op"]) }

// String returns the name as go test prints it, with "-N" for GOMAXPROCS N
// above 1.
func (k benchKey) String() string {
	if k.procs == 1 {
		return k.name
	}
	return k.name + "-" + strconv.Itoa(k.procs)
}
