// Package skipnote tells whoever runs go test that a package's tests were
// skipped for want of a tool, in one line that shows without -v.
//
// go test prints nothing of a passing package's output in package list
// mode (go test ./...), so a test's t.Skip message shows only with -v, and
// a package whose every test skipped reads "ok" like one that ran them.
// On Linux the line is therefore written to the go command's own standard
// output when that is a terminal, a pipe (a CI log) or a file opened for
// appending, beside its "ok" lines. A file the go command writes at its
// own offset ("go test ./... > log") would write over a line written
// beside its own, so there the line is appended once the go command has
// exited, at the end of the file, by a small detached shell that waits
// for it (at most a day). With -v (and -json) it goes to the test
// binary's standard error, which go test then shows. A result go test
// replays from its cache ("(cached)") replays no line: go test -count=1
// runs the tests again.
package skipnote

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
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
	w, closeW := out(line)
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

// out returns where line goes, and what closes it.
func out(line string) (io.Writer, func()) {
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
	info, err := f.Stat()
	if err == nil && info.Mode().IsRegular() && !appending(os.Getppid()) {
		// Written at the go command's own offset, the file would lose
		// the line under its next one: it is added when the go command
		// is done.
		f.Close()
		if appendAfterExit(os.Getppid(), line) == nil {
			return io.Discard, func() {}
		}
		return os.Stderr, func() {}
	}
	if err != nil {
		f.Close()
		return os.Stderr, func() {}
	}
	return f, func() { f.Close() }
}

// waitScript waits, polling, for the process $1 to exit, for at most a
// day (432,000 polls of 0.2 s), then appends $2 to the file $3.
const waitScript = `i=0
while kill -0 "$1" 2>/dev/null && [ "$i" -lt 432000 ]; do sleep 0.2; i=$((i+1)); done
printf '%s' "$2" >> "$3"`

// appendAfterExit starts a detached shell that appends line to the file
// that is process pid's standard output once pid has exited. The shell
// holds none of the test's descriptors, so go test does not wait for it.
func appendAfterExit(pid int, line string) error {
	path, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", pid))
	if err != nil || !filepath.IsAbs(path) {
		return fmt.Errorf("skipnote: standard output of %d is no file path", pid)
	}
	cmd := exec.Command("/bin/sh", "-c", waitScript, "sh", strconv.Itoa(pid), line, path)
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
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
