package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/crawlkit/robots/policy"
)

// zeros is an endless reader, like /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestLoadRobots(t *testing.T) {
	const header = "User-agent: *\r\n"
	// fill makes a file of header and one comment line ending in end, the
	// line's last byte placed at policy.MaxSize-1.
	fill := func(end string) string {
		return header + "#" + strings.Repeat("x", policy.MaxSize-len(header)-2) + end
	}
	tests := []struct {
		name        string
		data        string
		wantCutLine int
		wantLines   int
	}{
		{"a file within MaxSize is read whole", "User-agent: *\nDisallow: /\n", 0, 2},
		{"a CRLF split by MaxSize ends the last line", fill("\r\n"), 0, 2},
		{"content after a CRLF split by MaxSize is cut", fill("\r\nDisallow: /\n"), 3, 2},
		{"a line crossing MaxSize is cut whole", fill("xx\nDisallow: /\n"), 2, 1},
		{"a file without a line end within MaxSize is cut at line 1", strings.Repeat("x", policy.MaxSize+1), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "robots.txt")
			if err := os.WriteFile(name, []byte(tt.data), 0o666); err != nil {
				t.Fatal(err)
			}
			f, err := loadRobots(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if cutLine(f) != tt.wantCutLine || f.robots.Lines() != tt.wantLines {
				t.Errorf("cut at line %d after %d lines, want %d and %d", cutLine(f), f.robots.Lines(), tt.wantCutLine, tt.wantLines)
			}
		})
	}
}

// TestLoadRobotsEndless checks that an endless input is read only as far
// as a crawler reads it.
func TestLoadRobotsEndless(t *testing.T) {
	f, err := loadRobots("-", zeros{})
	if err != nil {
		t.Fatal(err)
	}
	if f.name != stdinName || cutLine(f) != 1 {
		t.Errorf("name %q, cut at line %d; want %q and 1", f.name, cutLine(f), stdinName)
	}
}

// cutLine is the first line crawlers ignore of f, 0 when they read it all.
func cutLine(f robotsFile) int {
	if f.cut == nil {
		return 0
	}
	return f.cut.Line
}

func TestLoadRobotsErrors(t *testing.T) {
	t.Run("a missing file", func(t *testing.T) {
		_, err := loadRobots(filepath.Join(t.TempDir(), "robots.txt"), nil)
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("got %v, want a not-exist error", err)
		}
	})
	t.Run("a failing standard input is named", func(t *testing.T) {
		broken := errors.New("broken pipe")
		_, err := loadRobots("-", iotest.ErrReader(broken))
		if !errors.Is(err, broken) || !strings.Contains(err.Error(), "standard input") {
			t.Errorf("got %v, want the read error, naming standard input", err)
		}
	})
}

func TestReadCapped(t *testing.T) {
	tests := []struct {
		name    string
		r       io.Reader
		wantLen int
		wantErr error
	}{
		{"input up to the limit is read", strings.NewReader("0123456789"), 10, nil},
		{"input past the limit is refused", strings.NewReader("0123456789x"), 0, errTooLarge},
		{"endless input is refused", zeros{}, 0, errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := readCapped(tt.r, 10)
			if !errors.Is(err, tt.wantErr) || len(data) != tt.wantLen {
				t.Errorf("read %d bytes, error %v; want %d, %v", len(data), err, tt.wantLen, tt.wantErr)
			}
		})
	}
}

// TestLoadCasesTooLarge checks that a cases file over maxCasesSize is
// refused rather than read into memory.
func TestLoadCasesTooLarge(t *testing.T) {
	name := filepath.Join(t.TempDir(), "cases.csv")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: no disk space is used for its zeros.
	if err := f.Truncate(maxCasesSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := loadCases(name); !errors.Is(err, errTooLarge) {
		t.Errorf("got %v, want errTooLarge", err)
	}
}

// TestCasesWarnsPastMaxSize checks that the commands without a place for
// file warnings in their output say on stderr that content was cut.
func TestCasesWarnsPastMaxSize(t *testing.T) {
	dir := t.TempDir()
	robots := "User-agent: *\nDisallow: /private\n" + strings.Repeat("#\n", policy.MaxSize/2) + "Disallow: /\n"
	if err := os.WriteFile(filepath.Join(dir, "robots.txt"), []byte(robots), 0o666); err != nil {
		t.Fatal(err)
	}
	cases := "agent,url,expected\nAnyBot,/private,disallowed\nAnyBot,/public,allowed\n"
	if err := os.WriteFile(filepath.Join(dir, "cases.csv"), []byte(cases), 0o666); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := runCLI(t, "", "cases", dir)
	if status != 0 || stdout != "2 passed, 0 failed\n" || !strings.Contains(stderr, "content past 500 KiB is ignored by crawlers") {
		t.Errorf("exit status %d, stdout %q, stderr %q; want 0, both cases passing and a warning", status, stdout, stderr)
	}
	status, _, stderr = runCLI(t, "", "test", "-robots", filepath.Join(dir, "robots.txt"), "-agent", "AnyBot", "/public")
	if status != 0 || !strings.Contains(stderr, "content past 500 KiB is ignored by crawlers") {
		t.Errorf("test: exit status %d, stderr %q; want 0 and a warning", status, stderr)
	}
}
