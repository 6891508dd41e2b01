package skipnote

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestPackagePath checks that the line names the package under test by
// its import path, found from the directory go test runs it in.
func TestPackagePath(t *testing.T) {
	if got, want := packagePath(), "github.com/crawlkit/robots/internal/skipnote"; got != want {
		t.Errorf("packagePath() = %q, want %q", got, want)
	}
}

// TestRedirectedOutputKeepsTheLine runs go test on a package whose test
// skips, its output sent to a file as "go test ./... > log" sends it
// (opened without O_APPEND, written at the go command's own offset), and
// checks that the file ends up with both the package's "ok" line and the
// skip line: written beside the "ok" line, the go command's next write
// would have gone over it.
func TestRedirectedOutputKeepsTheLine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the line reaches the go command's output through /proc")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	log := filepath.Join(t.TempDir(), "log")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Two packages, so that the go command writes again after the one
	// that skips.
	cmd := exec.Command(gotool, "test", "-count=1", "./testdata/skipper", "./testdata/passer")
	cmd.Env = append(os.Environ(), "CI=")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		data, _ := os.ReadFile(log)
		t.Fatalf("go test: %v\n%s", err, data)
	}
	want := "github.com/crawlkit/robots/internal/skipnote/testdata/skipper: skipping tests: no-such-tool not found (install: apt-get install no-such-tool)\n"
	var data []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		data, _ = os.ReadFile(log)
		if strings.Contains(string(data), want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(string(data), want) {
		t.Errorf("log lacks the skip line %q:\n%s", want, data)
	}
	for _, pkg := range []string{"skipper", "passer"} {
		if !strings.Contains(string(data), "ok  \tgithub.com/crawlkit/robots/internal/skipnote/testdata/"+pkg) {
			t.Errorf("log lacks the ok line of %s:\n%s", pkg, data)
		}
	}
}
