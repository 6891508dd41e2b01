package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs the command line args with stdin and returns the exit
// status and what was written to stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = run(args, strings.NewReader(stdin), &out, &errOut)
	return status, out.String(), errOut.String()
}

// check compares an exit status and outputs with what a test wants: every
// string of wantOut in stdout, of wantErr in stderr, and an empty stderr
// when wantErr is nil.
func check(t *testing.T, status int, stdout, stderr string, wantStatus int, wantOut, wantErr []string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, wantStatus, stdout, stderr)
	}
	for _, w := range wantOut {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	for _, w := range wantErr {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if wantErr == nil && stderr != "" {
		t.Errorf("unexpected stderr:\n%s", stderr)
	}
}

func TestRun(t *testing.T) {
	commands := []string{"test", "lint", "cases", "diff", "serve"}
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{"no arguments print usage on stderr and fail", nil, 2, nil, commands},
		{"-h prints usage on stdout", []string{"-h"}, 0, commands, nil},
		{"help prints usage on stdout", []string{"help"}, 0, commands, nil},
		{"an unknown command is bad usage", []string{"frob"}, 2, nil, []string{`unknown command "frob"`, "robotstxt -h"}},
		{"a flag before the command is an unknown command", []string{"-json"}, 2, nil, []string{`unknown command "-json"`}},
		{"test -h prints its help on stdout", []string{"test", "-h"}, 0, []string{"usage: robotstxt test", "-agent", "-expect", "Exit status"}, nil},
		{"lint -h prints its help on stdout", []string{"lint", "-h"}, 0, []string{"usage: robotstxt lint", "-json", "-fail", "error ", "warning ", "note ", "Exit status"}, nil},
		{"diff -h prints its help on stdout", []string{"diff", "-h"}, 0, []string{"usage: robotstxt diff", "-agent", "-urls", "-json", "Exit status"}, nil},
		{"cases -h prints its help on stdout", []string{"cases", "-h"}, 0, []string{"usage: robotstxt cases", "-robots", "-cases", "Exit status"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runCLI(t, "", tt.args...)
			check(t, status, stdout, stderr, tt.wantStatus, tt.wantOut, tt.wantErr)
		})
	}
}

// TestRunServeIsDispatched checks only that "serve" reaches runServe; the
// explorer's own tests cover what it serves.
func TestRunServeIsDispatched(t *testing.T) {
	status, _, stderr := runCLI(t, "", "serve", "-no-such-flag")
	if status != 2 || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("serve -no-such-flag: exit status %d, stderr %q; want 2 and the flag named", status, stderr)
	}
}
