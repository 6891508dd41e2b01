// Package skipnote tells whoever runs go test that a package's tests were
// skipped for want of a tool, in one line that shows without -v.
//
// go test prints nothing of a passing package's output in package list
// mode (go test ./...), so a test's t.Skip message shows only with -v, and
// a package whose every test skipped reads "ok" like one that ran them.
// On Linux the line is therefore written to the go command's own standard
// output when that is a terminal, a pipe (a CI log) or a file opened for
// appending, beside its "ok" lines; with -v (and -json), or where that
// output cannot be shared (a file it writes at its own offset, which would
// write over the line), it goes to the test binary's standard error, which
// go test shows with -v. A result go test replays from its cache
// ("(cached)") replays no line: go test -count=1 runs the tests again.
package skipnote

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	// mu protects said.
	mu   sync.Mutex
	said = map[string]bool{}
)

// Missing prints, once per process, that the tests of the package under
// test that need what are skipped, and how to install it:
// "import/path: skipping tests: what not found (install: how)".
func Missing(what, how string) {
	line := fmt.Sprintf("%s: skipping tests: %s not found (install: %s)\n", packagePath(), what, how)
	mu.Lock()
	defer mu.Unlock()
	if said[line] {
		return
	}
	said[line] = true
	w, closeW := out()
	io.WriteString(w, line)
	closeW()
}

// Require stops t for want of what, which how installs: under CI=true,
// where .ci/run installs everything the tests need, it fails t, since a
// skip there would hide a broken install step; elsewhere it prints the
// line Missing prints and skips t.
func Require(t testing.TB, what, how string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (install: %s): the tests that need it must run in CI", what, how)
	}
	Missing(what, how)
	t.Skipf("%s not found (install: %s); skipping", what, how)
}

// out returns where the line goes, and what closes it.
func out() (io.Writer, func()) {
	if !flag.Parsed() {
		// Called from TestMain before m.Run: the testing flags, -v among
		// them, are registered but not yet read.
		flag.Parse()
	}
	if testing.Testing() && testing.Verbose() {
		return os.Stderr, func() {}
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", os.Getppid()), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	// A file the output is redirected to without appending is written
	// at the go command's own offset, which would write over the line.
	if info, err := f.Stat(); err != nil || info.Mode().IsRegular() && !appending(os.Getppid()) {
		f.Close()
		return os.Stderr, func() {}
	}
	return f, func() { f.Close() }
}

// packagePath returns the import path of the package under test: go test
// runs a test binary in its package's directory, below its module's
// go.mod. Without a go.mod it is the directory.
func packagePath() string {
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Base(os.Args[0])
	}
	for root := dir; ; {
		if mod := modulePath(filepath.Join(root, "go.mod")); mod != "" {
			rel, _ := filepath.Rel(root, dir)
			return strings.TrimSuffix(mod+"/"+filepath.ToSlash(rel), "/.")
		}
		up := filepath.Dir(root)
		if up == root {
			return dir
		}
		root = up
	}
}

// modulePath returns the module path a go.mod declares, "" when there is
// no readable go.mod there.
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// appending reports whether the standard output of process pid is open
// for appending (O_APPEND), so that every write goes to the end.
func appending(pid int) bool {
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/1", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&oAppend != 0
		}
	}
	return false
}

// oAppend is Linux's O_APPEND, as /proc's fdinfo shows it.
const oAppend = 0o2000
