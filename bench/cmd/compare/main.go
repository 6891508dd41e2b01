// Command compare measures the benchmarks of package regress on two
// checkouts of the module, an old and a new one, and prints a table of
// both side by side: instructions per operation counted by callgrind, and
// wall-clock medians of alternating runs with benchstat's comparison.
//
// Usage (from the bench directory; ../compare.sh runs it so):
//
//	compare [-count n] [-benchtime d] [-corpus dir] [-out dir] [-wall=false] [-callgrind=false] OLD NEW
//
// OLD and NEW are the root directories of the two checkouts. Each is
// built with go test -c over its own tree, with the files of this
// checkout's regress directory laid over its bench/regress (go test
// -overlay, so that neither checkout is written to and both run the same
// benchmark code, whether or not they have that directory themselves).
//
// Instructions: each benchmark runs under valgrind --tool=callgrind twice,
// for a small and a large fixed iteration count, with GOMAXPROCS=1,
// asynchronous preemption off and the garbage collector off (GOGC=off:
// its work is paced by the clock, which valgrind slows, and would make the
// counts vary by more than the differences sought); the difference of the
// two totals over the difference of the counts is the cost of one
// operation, start-up and set-up removed, allocation included, collection
// not (the wall-clock runs include it, and report B/op and allocs/op). The
// counts repeat within a few tenths of a percent whatever the load.
//
// Wall clock: -count rounds, each running every benchmark once on each
// checkout, the order of the two alternating from round to round, at
// GOMAXPROCS 1. The per-round difference of Held/transport and Held/bare
// is added to each round's output as Held/added, so that benchstat
// compares the transport's added time as well.
//
// The callgrind files, the raw go test output of both checkouts and
// benchstat's full report are kept in -out (by default a new temporary
// directory), whose path is printed at the end.
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// bench is one benchmark of package regress as compare runs it.
type bench struct {
	name   string // as go test prints it, without the GOMAXPROCS suffix
	filter string // the -test.bench pattern that selects it alone
	// small and large are the iteration counts of the two callgrind runs.
	// Their fixed costs differ by up to about 100,000 instructions from
	// run to run (the runtime's background threads), so large-small is
	// chosen to make that a fraction of an instruction per operation. For
	// Decision both are multiples of its sample of 1,470 pairs, so that
	// the difference decides each pair equally often.
	small, large int
}

var benches = []bench{
	{"BenchmarkDecision", "^BenchmarkDecision$", 1470, 1470 * 101},
	{"BenchmarkParse", "^BenchmarkParse$", 2, 7},
	{"BenchmarkFirst/corpus", "^BenchmarkFirst$/^corpus$", 2, 7},
	{"BenchmarkFirst/typical", "^BenchmarkFirst$/^typical$", 20, 220},
	{"BenchmarkTokenize", "^BenchmarkTokenize$", 2, 22},
	{"BenchmarkHeld/bare", "^BenchmarkHeld$/^bare$", 2000, 202000},
	{"BenchmarkHeld/transport", "^BenchmarkHeld$/^transport$", 2000, 202000},
	// A new origin costs a fetch, a parse and a store write: fewer
	// iterations make the fixed costs as small a share.
	{"BenchmarkNewOrigin/bare", "^BenchmarkNewOrigin$/^bare$", 2000, 52000},
	{"BenchmarkNewOrigin/transport", "^BenchmarkNewOrigin$/^transport$", 500, 10500},
}

// added is the derived row: Held/transport less Held/bare.
const added = "BenchmarkHeld/added"

// rows lists the table's rows in order, with the text that describes each.
var rows = []struct{ name, what string }{
	{"BenchmarkDecision", "Decision: one Allowed on a parsed corpus file"},
	{"BenchmarkParse", "Parse: policy.Parse of every corpus file"},
	{"BenchmarkFirst/corpus", "First/corpus: Parse and one Allowed, every corpus file"},
	{"BenchmarkFirst/typical", "First/typical: the same, the 15 typical files"},
	{"BenchmarkTokenize", "Tokenize: the bare tokenizer over the corpus"},
	{"BenchmarkHeld/bare", "Held/bare: the base round-tripper alone"},
	{"BenchmarkHeld/transport", "Held/transport: through the transport"},
	{added, "Held/added: transport - bare"},
	{"BenchmarkNewOrigin/bare", "NewOrigin/bare: a request to a new origin on the base alone"},
	{"BenchmarkNewOrigin/transport", "NewOrigin/transport: the same through the transport (robots.txt fetched, parsed, stored, decided)"},
}

// tree is one checkout under comparison.
type tree struct {
	label string // "old" or "new"
	root  string // absolute path of the checkout
	rev   string // its HEAD commit, short, or "?"
	bin   string // its test binary
}

func main() {
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...) }
	count := flag.Int("count", 10, "rounds of wall-clock runs")
	benchtime := flag.String("benchtime", "1s", "-test.benchtime of each wall-clock run")
	corpus := flag.String("corpus", "", "corpus directory (default: this checkout's testdata/robots-corpus)")
	out := flag.String("out", "", "directory for the raw results (default: a new temporary directory)")
	wall := flag.Bool("wall", true, "run the wall-clock rounds")
	grind := flag.Bool("callgrind", true, "count instructions under valgrind")
	wd := flag.String("wd", "", "directory that relative paths are relative to (default: the current one)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: compare [flags] OLD NEW\n\nOLD and NEW are the root directories of two checkouts of the module.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	abs := func(p string) string {
		if p != "" && *wd != "" && !filepath.IsAbs(p) {
			return filepath.Join(*wd, p)
		}
		return p
	}
	if err := run(*count, *benchtime, abs(*corpus), abs(*out), *wall, *grind, abs(flag.Arg(0)), abs(flag.Arg(1)), log); err != nil {
		log("%v", err)
		os.Exit(1)
	}
}

func run(count int, benchtime, corpus, out string, wall, grind bool, oldRoot, newRoot string, log func(string, ...any)) error {
	self, err := os.Getwd() // the bench directory of this checkout
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(self, "regress", "regress_test.go")); err != nil {
		return fmt.Errorf("run from the bench directory of a checkout that has regress/: %w", err)
	}
	if corpus == "" {
		corpus = filepath.Join(self, "..", "testdata", "robots-corpus")
	}
	if corpus, err = filepath.Abs(corpus); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(corpus, "urls.txt")); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	if out == "" {
		if out, err = os.MkdirTemp("", "robots-compare-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	benchstat := ""
	if wall {
		if benchstat, err = findBenchstat(); err != nil {
			return err
		}
	}
	if grind {
		if _, err := exec.LookPath("valgrind"); err != nil {
			return fmt.Errorf("valgrind: %w (or -callgrind=false)", err)
		}
	}

	trees := []*tree{{label: "old", root: oldRoot}, {label: "new", root: newRoot}}
	for _, t := range trees {
		if t.root, err = filepath.Abs(t.root); err != nil {
			return err
		}
		t.rev = headOf(t.root)
		t.bin = filepath.Join(out, t.label+".test")
		log("building %s: %s at %s", t.label, t.root, t.rev)
		if err := build(self, t, out); err != nil {
			return err
		}
	}
	env := append(os.Environ(), "ROBOTS_CORPUS="+corpus)

	instr := map[string]map[string]float64{} // tree label, benchmark name
	if grind {
		for _, t := range trees {
			instr[t.label] = map[string]float64{}
			for _, b := range benches {
				perOp, err := instructions(t, b, out, env, log)
				if err != nil {
					return err
				}
				instr[t.label][b.name] = perOp
			}
			instr[t.label][added] = instr[t.label]["BenchmarkHeld/transport"] - instr[t.label]["BenchmarkHeld/bare"]
		}
	}

	var stat *statReport
	var wallRes samples
	if wall {
		if wallRes, err = rounds(trees, count, benchtime, out, env, log); err != nil {
			return err
		}
		if stat, err = runBenchstat(benchstat, trees, out); err != nil {
			return err
		}
	}

	w := bufio.NewWriter(os.Stdout)
	printTable(w, trees, grind, wall, count, instr, wallRes, stat)
	if stat != nil {
		fmt.Fprintf(w, "\nbenchstat (old = %s, new = %s):\n\n%s", trees[0].rev, trees[1].rev, stat.text)
	}
	fmt.Fprintf(w, "\nraw results: %s\n", out)
	return w.Flush()
}

// findBenchstat finds benchstat on PATH or where go install puts it.
func findBenchstat() (string, error) {
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p, nil
	}
	for _, v := range []string{"GOBIN", "GOPATH"} {
		b, err := exec.Command("go", "env", v).Output()
		if err != nil {
			continue
		}
		dir := strings.TrimSpace(string(b))
		if dir == "" {
			continue
		}
		if v == "GOPATH" {
			dir = filepath.Join(filepath.SplitList(dir)[0], "bin")
		}
		p := filepath.Join(dir, "benchstat")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("benchstat not found: go install golang.org/x/perf/cmd/benchstat@latest (or -wall=false)")
}

// build compiles t's regress test binary with this checkout's regress
// files laid over t's: each replaces t's file of that name, and a .go file
// that t has there and this checkout has not is hidden.
func build(self string, t *tree, out string) error {
	dst := filepath.Join(t.root, "bench", "regress")
	if _, err := os.Stat(filepath.Join(t.root, "bench", "go.mod")); err != nil {
		return fmt.Errorf("%s is not a checkout of the module: %w", t.root, err)
	}
	replace := map[string]string{}
	own, err := filepath.Glob(filepath.Join(self, "regress", "*.go"))
	if err != nil {
		return err
	}
	for _, f := range own {
		replace[filepath.Join(dst, filepath.Base(f))] = f
	}
	theirs, _ := filepath.Glob(filepath.Join(dst, "*.go"))
	for _, f := range theirs {
		if _, ok := replace[f]; !ok {
			replace[f] = ""
		}
	}
	overlay := filepath.Join(out, t.label+"-overlay.json")
	data, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return err
	}
	if err := os.WriteFile(overlay, data, 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", overlay, "-o", t.bin, "./regress")
	cmd.Dir = filepath.Join(t.root, "bench")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", t.root, err)
	}
	return nil
}

// instructions returns b's instructions per operation on t: the totals of
// two callgrind runs, differenced.
func instructions(t *tree, b bench, out string, env []string, log func(string, ...any)) (float64, error) {
	var totals [2]float64
	for i, n := range []int{b.small, b.large} {
		file := filepath.Join(out, fmt.Sprintf("%s-%s-%d.callgrind", t.label, fileName(b.name), n))
		log("callgrind %s %s, %d iterations", t.label, b.name, n)
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+file,
			t.bin, "-test.run=^$", "-test.bench="+b.filter, "-test.benchtime="+strconv.Itoa(n)+"x",
			"-test.count=1", "-test.cpu=1", "-test.timeout=0")
		cmd.Dir = out
		// valgrind 3.19 reports RDTSCP in CPUID but cannot run it, and the
		// runtime's cputicks uses it when reported.
		cmd.Env = append(env, "GOGC=off", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("callgrind %s %s: %w\n%s%s", t.label, b.name, err, stdout.Bytes(), stderr.Bytes())
		}
		results := parseBench(stdout.String())
		if len(results[b.name]) != 1 || results[b.name][0].n != n {
			return 0, fmt.Errorf("callgrind %s %s: want one result of %d iterations, got:\n%s", t.label, b.name, n, stdout.Bytes())
		}
		total, err := callgrindTotal(file)
		if err != nil {
			return 0, err
		}
		totals[i] = total
	}
	return (totals[1] - totals[0]) / float64(b.large-b.small), nil
}

// fileName turns a benchmark's name into part of a file name.
func fileName(name string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "Benchmark"), "/", "-")
}

// callgrindTotal reads the total instruction count from a callgrind file.
func callgrindTotal(file string) (float64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		for _, key := range []string{"totals:", "summary:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					return strconv.ParseFloat(f[0], 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no totals line", file)
}

// result is one benchmark line of go test output.
type result struct {
	n       int
	metrics map[string]float64 // by unit: ns/op, B/op, allocs/op...
}

// parseBench returns the results of go test -bench output by benchmark
// name, the GOMAXPROCS suffix dropped.
func parseBench(out string) map[string][]result {
	res := map[string][]result{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		r := result{n, map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			r.metrics[f[i+1]] = v
		}
		if _, ok := r.metrics["ns/op"]; ok {
			res[baseName(f[0])] = append(res[baseName(f[0])], r)
		}
	}
	return res
}

// baseName drops the -N GOMAXPROCS suffix go test adds to a name.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// rounds runs the wall-clock rounds, writing each tree's output, with a
// Held/added line after each run, to out/<label>.txt. It returns each
// tree's samples.
func rounds(trees []*tree, count int, benchtime, out string, env []string, log func(string, ...any)) (samples, error) {
	// Two -test.bench patterns: one with a second element runs no
	// benchmark without sub-benchmarks, and the second leaves out
	// NewOrigin's on net/http, which the table does not show.
	patterns := []string{
		"^Benchmark(Decision|Parse|Tokenize)$",
		"^Benchmark(First|Held|NewOrigin)$/^(corpus|typical|bare|transport)$",
	}
	all := samples{}
	files := map[string]*os.File{}
	for _, t := range trees {
		f, err := os.Create(filepath.Join(out, t.label+".txt"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files[t.label] = f
	}
	for r := range count {
		order := trees
		if r%2 == 1 {
			order = []*tree{trees[1], trees[0]}
		}
		for _, t := range order {
			log("wall round %d of %d: %s", r+1, count, t.label)
			var stdout bytes.Buffer
			for _, pattern := range patterns {
				cmd := exec.Command(t.bin, "-test.run=^$", "-test.bench="+pattern, "-test.benchtime="+benchtime,
					"-test.count=1", "-test.cpu=1", "-test.benchmem", "-test.timeout=0")
				cmd.Dir = out
				cmd.Env = env
				cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
				if err := cmd.Run(); err != nil {
					return nil, fmt.Errorf("wall %s: %w\n%s", t.label, err, stdout.Bytes())
				}
			}
			res := parseBench(stdout.String())
			for _, b := range benches {
				if len(res[b.name]) != 1 {
					return nil, fmt.Errorf("wall %s: no result for %s in:\n%s", t.label, b.name, stdout.Bytes())
				}
				for unit, v := range res[b.name][0].metrics {
					all.add(t.label, b.name, unit, v)
				}
			}
			diff := res["BenchmarkHeld/transport"][0].metrics["ns/op"] - res["BenchmarkHeld/bare"][0].metrics["ns/op"]
			all.add(t.label, added, "ns/op", diff)
			text := strings.TrimSuffix(stdout.String(), "\n") + "\n" +
				fmt.Sprintf("%s\t%d\t%.2f ns/op\n", added, res["BenchmarkHeld/transport"][0].n, diff)
			if _, err := io.WriteString(files[t.label], text); err != nil {
				return nil, err
			}
		}
	}
	return all, nil
}

// samples holds the wall-clock rounds' values: by tree label, benchmark
// name and unit.
type samples map[string]map[string]map[string][]float64

func (s samples) add(label, name, unit string, v float64) {
	if s[label] == nil {
		s[label] = map[string]map[string][]float64{}
	}
	if s[label][name] == nil {
		s[label][name] = map[string][]float64{}
	}
	s[label][name][unit] = append(s[label][name][unit], v)
}

// median returns the median of the values of label, name and unit; NaN
// if there are none.
func (s samples) median(label, name, unit string) float64 {
	return median(s[label][name][unit])
}

// statReport is what benchstat said: its text report, and the sec/op
// comparison of each benchmark ("+3.20% (p=0.002 n=10)", or "~ (p=...)").
type statReport struct {
	text  string
	delta map[string]string
}

func runBenchstat(benchstat string, trees []*tree, out string) (*statReport, error) {
	args := func(format string) []string {
		a := []string{"-format", format}
		for _, t := range trees {
			a = append(a, t.label+"="+filepath.Join(out, t.label+".txt"))
		}
		return a
	}
	text, err := exec.Command(benchstat, args("text")...).Output()
	if err != nil {
		return nil, fmt.Errorf("benchstat: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, "benchstat.txt"), text, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(benchstat, args("csv")...)
	cmd.Stderr = io.Discard
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("benchstat -format csv: %w", err)
	}
	delta, err := parseStatCSV(data)
	if err != nil {
		return nil, err
	}
	return &statReport{string(text), delta}, nil
}

// parseStatCSV reads the sec/op table of benchstat's CSV: a header row
// whose first cell is empty and whose cells name the inputs, a row whose
// second cell is "sec/op", then one row per benchmark ending in the
// comparison and its P, until the next header row (the csv reader skips
// the empty lines between tables).
func parseStatCSV(data []byte) (map[string]string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("benchstat csv: %w", err)
	}
	delta := map[string]string{}
	in := false
	for _, rec := range records {
		if len(rec) > 1 && rec[0] == "" { // a header row: the inputs, or the units
			in = rec[1] == "sec/op"
			continue
		}
		if !in || len(rec) < 2 || rec[0] == "geomean" {
			continue
		}
		// name, old sec/op, CI, new sec/op, CI, vs base, P
		if len(rec) >= 7 {
			delta[baseName("Benchmark"+rec[0])] = rec[len(rec)-2] + " (" + rec[len(rec)-1] + ")"
		}
	}
	if len(delta) == 0 {
		return nil, fmt.Errorf("benchstat csv: no sec/op comparison in:\n%s", data)
	}
	return delta, nil
}

// median of xs, NaN if empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints the comparison as a Markdown table.
func printTable(w io.Writer, trees []*tree, grind, wall bool, count int, instr map[string]map[string]float64, wallRes samples, stat *statReport) {
	old, nw := trees[0], trees[1]
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n", old.root, old.rev, nw.root, nw.rev)
	fmt.Fprintf(w, "%s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	head := []string{"benchmark"}
	align := []string{"---"}
	if grind {
		head = append(head, "instr/op old", "instr/op new", "new/old")
		align = append(align, "---:", "---:", "---:")
	}
	if wall {
		head = append(head, "ns/op old (median)", "ns/op new (median)", "new/old", "benchstat sec/op", "B/op old, new", "allocs/op old, new")
		align = append(align, "---:", "---:", "---:", "---", "---:", "---:")
	}
	fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(align, " | "))
	for _, r := range rows {
		cells := []string{r.what}
		if grind {
			o, n := instr[old.label][r.name], instr[nw.label][r.name]
			cells = append(cells, num(o), num(n), ratio(n, o))
		}
		if wall {
			o, n := wallRes.median(old.label, r.name, "ns/op"), wallRes.median(nw.label, r.name, "ns/op")
			d := ""
			if stat != nil {
				d = stat.delta[r.name]
			}
			cells = append(cells, num(o), num(n), ratio(n, o), d)
			for _, unit := range []string{"B/op", "allocs/op"} {
				o, n := wallRes.median(old.label, r.name, unit), wallRes.median(nw.label, r.name, unit)
				if math.IsNaN(o) && math.IsNaN(n) {
					cells = append(cells, "")
					continue
				}
				cells = append(cells, num(o)+", "+num(n))
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	if grind {
		fmt.Fprintln(w, "instr/op: callgrind totals of two runs of fixed iteration counts, differenced (GOMAXPROCS=1).")
	}
	if wall {
		fmt.Fprintf(w, "ns/op: medians of %d alternating rounds at GOMAXPROCS 1; Held/added is each round's transport - bare.\n", count)
	}
}

// num formats x with thousands separators, with one decimal if it is
// below 100 and not whole.
func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	if math.Abs(x) < 100 && x != math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ratio formats n/o as a factor, "-" when it has no meaning.
func ratio(n, o float64) string {
	if o <= 0 || math.IsNaN(o) || math.IsNaN(n) {
		return "-"
	}
	return strconv.FormatFloat(n/o, 'f', 3, 64)
}

// headOf returns the short commit a checkout's HEAD names, read from its
// .git without running git, or "?".
func headOf(root string) string {
	gitDir := filepath.Join(root, ".git")
	if data, err := os.ReadFile(gitDir); err == nil { // a worktree: "gitdir: path"
		if dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(root, dir)
			}
			gitDir = dir
		}
	}
	common := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "?"
	}
	head := strings.TrimSpace(string(data))
	ref, isRef := strings.CutPrefix(head, "ref: ")
	if !isRef {
		return short(head)
	}
	name := strings.TrimPrefix(ref, "refs/heads/")
	for _, dir := range []string{gitDir, common} {
		if data, err := os.ReadFile(filepath.Join(dir, ref)); err == nil {
			return short(strings.TrimSpace(string(data))) + " " + name
		}
	}
	if data, err := os.ReadFile(filepath.Join(common, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if hash, r, ok := strings.Cut(line, " "); ok && r == ref {
				return short(hash) + " " + name
			}
		}
	}
	return "? " + name
}

func short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}
