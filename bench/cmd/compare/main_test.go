package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
BenchmarkDecision-2   	    1470	       910.8 ns/op	       0 B/op	       0 allocs/op
BenchmarkParse        	      30	  33725591 ns/op	  74.09 MB/s	10185974 B/op	   12726 allocs/op
BenchmarkHeld/transport-16	  42000	      1266 ns/op
--- BENCH: BenchmarkHeld
PASS
`
	res := parseBench(out)
	if r := res["BenchmarkDecision"]; len(r) != 1 || r[0].n != 1470 || r[0].metrics["ns/op"] != 910.8 || r[0].metrics["allocs/op"] != 0 {
		t.Errorf("Decision: %+v", r)
	}
	if r := res["BenchmarkParse"]; len(r) != 1 || r[0].metrics["MB/s"] != 74.09 || r[0].metrics["B/op"] != 10185974 {
		t.Errorf("Parse: %+v", r)
	}
	if r := res["BenchmarkHeld/transport"]; len(r) != 1 || r[0].metrics["ns/op"] != 1266 {
		t.Errorf("Held/transport: %+v", r)
	}
	if len(res) != 3 {
		t.Errorf("%d results, want 3: %v", len(res), res)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkHeld/bare-2":  "BenchmarkHeld/bare",
		"BenchmarkHeld/bare":    "BenchmarkHeld/bare",
		"BenchmarkX/origins=10": "BenchmarkX/origins=10",
		"BenchmarkX/a-b":        "BenchmarkX/a-b",
	} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseStatCSV(t *testing.T) {
	data := []byte(`goos: linux
pkg: github.com/crawlkit/robots/bench/regress
,old,,new,,,
,sec/op,CI,sec/op,CI,vs base,P
Decision,8.008e-07,1%,8.1e-07,2%,~,p=0.333 n=10
Held/added,2.8e-06,1%,3.0e-06,1%,+7.14%,p=0.000 n=10
geomean,1e-05,,1e-05,,+1.00%,

,old,,new,,,
,B/op,CI,B/op,CI,vs base,P
Decision,0,0%,0,0%,~,p=1.000 n=10
Held/added,0,0%,0,0%,~,p=1.000 n=10
`)
	delta, err := parseStatCSV(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"BenchmarkDecision":   "~ (p=0.333 n=10)",
		"BenchmarkHeld/added": "+7.14% (p=0.000 n=10)",
	}
	if len(delta) != len(want) {
		t.Errorf("got %v, want %v", delta, want)
	}
	for k, v := range want {
		if delta[k] != v {
			t.Errorf("%s: %q, want %q", k, delta[k], v)
		}
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 1.5: "1.5", 144: "144", 4343.4: "4,343", 95975229: "95,975,229", -160: "-160", -1234: "-1,234"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
}

func TestHeadOf(t *testing.T) {
	const hash = "b5736f6c0ffee0000000000000000000000000000"
	// A repository with a branch in packed-refs.
	repo := t.TempDir()
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, ".git", "packed-refs"), "# pack-refs\n"+hash+" refs/heads/main\n")
	if got := headOf(repo); got != "b5736f6 main" {
		t.Errorf("packed ref: %q", got)
	}
	// A worktree of it, detached.
	wt := t.TempDir()
	gitDir := filepath.Join(repo, ".git", "worktrees", "wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+gitDir+"\n")
	write(t, filepath.Join(gitDir, "commondir"), "../..\n")
	write(t, filepath.Join(gitDir, "HEAD"), hash+"\n")
	if got := headOf(wt); got != "b5736f6" {
		t.Errorf("detached worktree: %q", got)
	}
	// The worktree on a branch whose ref is a loose file in the common dir.
	write(t, filepath.Join(gitDir, "HEAD"), "ref: refs/heads/perf\n")
	write(t, filepath.Join(repo, ".git", "refs", "heads", "perf"), hash+"\n")
	if got := headOf(wt); got != "b5736f6 perf" {
		t.Errorf("worktree branch: %q", got)
	}
	if got := headOf(t.TempDir()); got != "?" {
		t.Errorf("no repository: %q", got)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
