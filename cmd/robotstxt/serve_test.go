package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/explorer"
	"github.com/crawlkit/robots/policy"
)

// announcer is the stdout of a running serve: it hands over the first line
// written, the one that names the address.
type announcer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (a *announcer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	before := a.buf.Len()
	a.buf.Write(p)
	if i := bytes.IndexByte(a.buf.Bytes(), '\n'); i >= 0 && before <= i {
		a.lines <- a.buf.String()[:i]
	}
	return len(p), nil
}

// syncBuffer is a stderr that the test reads while serve runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServe runs serve with args on a free loopback port, unless args
// give another -addr, until the test ends, and returns the page's address
// and serve's stderr.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &announcer{lines: make(chan string, 1)}
	errOut := &syncBuffer{}
	status := make(chan int, 1)
	go func() { status <- serveUntil(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), out, errOut) }()
	t.Cleanup(func() {
		cancel()
		// A generous ceiling: only a shutdown that hangs reaches it.
		select {
		case s := <-status:
			if s != 0 {
				t.Errorf("serve exited %d after the interrupt, want 0; stderr:\n%s", s, errOut)
			}
		case <-time.After(time.Minute):
			t.Error("serve did not stop after the interrupt")
		}
	})
	select {
	case line := <-out.lines:
		addr, ok := strings.CutPrefix(line, "robotstxt explorer listening on ")
		if !ok || !strings.HasPrefix(addr, "http://") || !strings.HasSuffix(addr, "/") {
			t.Fatalf("serve printed %q, want the address to open", line)
		}
		return addr, errOut
	case s := <-status:
		t.Fatalf("serve exited %d before listening; stderr:\n%s", s, errOut)
	case <-time.After(time.Minute):
		t.Fatal("serve printed no address")
	}
	return "", nil
}

// serveStart is GET /api/start: what the page starts with.
type serveStart struct {
	Robots string `json:"robots"`
	Source string `json:"source"`
}

func getStart(t *testing.T, addr string) serveStart {
	t.Helper()
	resp, err := http.Get(addr + "api/start")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s serveStart
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServeStartsWithTheFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(small, []byte("User-agent: *\nDisallow: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("Disallow: /a\n", policy.MaxSize/13+10)), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.txt")
	if err := os.WriteFile(huge, []byte(strings.Repeat("Disallow: /a\n", explorer.MaxRobots/13+10)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantRobots string // the start of the text the page starts with
		wantSource string
		wantLen    int // the text's length, when checked
		wantErr    string
	}{
		{"no file starts with the example", nil, "# robots.txt for shop.example", "example", 0, ""},
		{"file is the start", []string{"-robots", small}, "User-agent: *\nDisallow: /x\n", small, 0, ""},
		{"file over 500 KiB is whole, its cut said", []string{"-robots", big}, "Disallow: /a\n", big,
			len(strings.Repeat("Disallow: /a\n", policy.MaxSize/13+10)),
			fmt.Sprintf("big.txt:%[1]d: content past 500 KiB is ignored by crawlers; the page shows the whole file and marks the lines they never read, from line %[1]d on\n", policy.MaxSize/13+1)},
		{"file over the page's limit is cut there", []string{"-robots", huge}, "Disallow: /a\n", huge,
			len(policy.Truncate([]byte(strings.Repeat("Disallow: /a\n", explorer.MaxRobots/13+10)), explorer.MaxRobots)),
			"huge.txt is over 2000 KiB: the page starts with its first 2000 KiB, up to the last whole line\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, errOut := startServe(t, tt.args...)
			s := getStart(t, addr)
			if !strings.HasPrefix(s.Robots, tt.wantRobots) || s.Source != tt.wantSource || tt.wantLen != 0 && len(s.Robots) != tt.wantLen {
				t.Errorf("page starts with %d bytes %.40q from %q, want %q from %q", len(s.Robots), s.Robots, s.Source, tt.wantRobots, tt.wantSource)
			}
			if got := errOut.String(); tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestServeAddress(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantAddr string
		wantErr  string
	}{
		{"loopback by default", nil, "http://127.0.0.1:", ""},
		{"all interfaces is opened on localhost, with a warning", []string{"-addr", ":0"}, "http://localhost:", "reachable from other machines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, errOut := startServe(t, tt.args...)
			if !strings.HasPrefix(addr, tt.wantAddr) {
				t.Errorf("address %q, want %s...", addr, tt.wantAddr)
			}
			if got := errOut.String(); tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
			if s := getStart(t, addr); s.Source != "example" {
				t.Errorf("the page at %s starts with %q, want the example", addr, s.Source)
			}
		})
	}
}

func TestServeBadUsage(t *testing.T) {
	busy, _ := startServe(t)
	busyAddr := strings.TrimSuffix(strings.TrimPrefix(busy, "http://"), "/")
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{"-h prints the help on stdout", []string{"-h"}, 0, []string{"usage: robotstxt serve", "-addr", "-robots", "Exit status"}, nil},
		{"an argument is bad usage", []string{"robots.txt"}, 2, nil, []string{`unexpected argument "robots.txt"`, "usage: robotstxt serve"}},
		{"an unknown flag is bad usage", []string{"-port", "80"}, 2, nil, []string{"-port"}},
		{"a missing file is bad usage", []string{"-robots", filepath.Join(t.TempDir(), "none.txt")}, 2, nil, []string{"none.txt", "no such file"}},
		{"an address in use fails", []string{"-addr", busyAddr}, 1, nil, []string{"address already in use"}},
		{"a malformed address fails", []string{"-addr", "localhost"}, 1, nil, []string{"missing port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := serveUntil(t.Context(), tt.args, &out, &errOut)
			check(t, status, out.String(), errOut.String(), tt.wantStatus, tt.wantOut, tt.wantErr)
		})
	}
}
