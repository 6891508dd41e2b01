package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// results holds every sample of a benchmark output, by benchmark name
// (without "Benchmark" and the GOMAXPROCS suffix) and unit.
type results struct {
	// config holds the "key: value" lines, such as goos, cpu, date.
	config map[string]string
	// names lists the benchmarks in order of first appearance.
	names   []string
	samples map[string]map[string][]float64
}

// parseOutput reads the output of go test -bench, in the Go benchmark data
// format: configuration lines "key: value" and result lines
// "BenchmarkName-N iterations value unit [value unit ...]". Other lines
// (PASS, ok, logs) are skipped.
func parseOutput(r io.Reader) (*results, error) {
	res := &results{config: map[string]string{}, samples: map[string]map[string][]float64{}}
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
		name := trimProcs(strings.TrimPrefix(fields[0], "Benchmark"))
		units, ok := res.samples[name]
		if !ok {
			units = map[string][]float64{}
			res.samples[name] = units
			res.names = append(res.names, name)
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

// trimProcs drops the "-N" that go test appends to a benchmark name when
// GOMAXPROCS is not 1.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// median returns the median of name's samples in unit, and whether there
// are any.
func (r *results) median(name, unit string) (float64, bool) {
	vs := slices.Clone(r.samples[name][unit])
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

// runs returns how many samples name has in ns/op.
func (r *results) runs(name string) int { return len(r.samples[name]["ns/op"]) }
