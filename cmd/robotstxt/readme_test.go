package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeCommand is a robotstxt command line of the README, with the
// comment that follows it.
type readmeCommand struct {
	args    []string
	comment string
}

// readmeCommands returns the robotstxt command lines of the README's sh
// blocks ("go run ./cmd/robotstxt ARGS # comment").
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	var cmds []readmeCommand
	inSh := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = !inSh && line == "```sh"
		case inSh:
			comment := ""
			if i := strings.Index(line, " #"); i >= 0 {
				line, comment = line[:i], strings.TrimSpace(line[i+2:])
			}
			if rest, ok := strings.CutPrefix(line, "go run ./cmd/robotstxt "); ok {
				cmds = append(cmds, readmeCommand{strings.Fields(rest), comment})
			}
		}
	}
	return cmds
}

// passedLine is the last line of a cases run with nothing failed.
var passedLine = regexp.MustCompile(`(?m)^[1-9]\d* passed, 0 failed\n\z`)

// TestREADME runs every robotstxt command the README shows, from the
// repository's root as a reader would, so that none goes stale: none may
// be bad usage, and what the README says of their outcome must hold: a
// command whose comment says it "passes" exits 0, one that "fails" or
// "changes" exits 1.
func TestREADME(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module ")
	for _, want := range []string{"go get " + module + " ", "go install " + module + "/cmd/robotstxt@latest"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}

	cmds := readmeCommands(t, readme)
	if len(cmds) < 4 {
		t.Fatalf("found %d robotstxt commands in the README, want at least test, lint, cases and serve: %q", len(cmds), cmds)
	}
	t.Chdir("../..")
	seen := map[string]bool{}
	for _, cmd := range cmds {
		args := cmd.args
		name := strings.Join(args, " ")
		seen[args[0]] = true
		t.Run(name, func(t *testing.T) {
			var status int
			var stdout, stderr string
			if args[0] == "serve" {
				// The explorer runs until interrupted: here, at once,
				// and on a free port.
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				var out, errOut strings.Builder
				status = serveUntil(ctx, append(args[1:], "-addr", "127.0.0.1:0"), &out, &errOut)
				stdout, stderr = out.String(), errOut.String()
			} else {
				status, stdout, stderr = runCLI(t, "", args...)
			}
			if status == 2 || stderr != "" {
				t.Fatalf("exit status %d, stderr:\n%s", status, stderr)
			}
			passes, fails := strings.Contains(cmd.comment, "passes"), strings.Contains(cmd.comment, "fails") || strings.Contains(cmd.comment, "changes")
			switch {
			case passes && status != 0:
				t.Errorf("exit status %d, output:\n%s\nthe README says it passes", status, stdout)
			case fails && status != 1:
				t.Errorf("exit status %d, output:\n%s\nthe README says it fails", status, stdout)
			case args[0] == "cases" && slices.Contains(args, "-json"):
				var out casesOutput
				if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != 0 || out.Summary.Passed == 0 || out.Summary.Failed != 0 || len(out.Cases) != out.Summary.Passed {
					t.Errorf("exit status %d, %v, summary %+v; the README promises a clean release check as JSON", status, err, out.Summary)
				}
			case args[0] == "cases" && (status != 0 || !passedLine.MatchString(stdout)):
				t.Errorf("exit status %d, output ends %q; the README promises a clean release check", status, lastLine(stdout))
			case args[0] == "lint" && strings.HasSuffix(name, "allow-all.txt") && (status != 0 || stdout != ""):
				t.Errorf("exit status %d, output %q; the README promises no warning for the allow-all", status, stdout)
			case args[0] == "serve" && (status != 0 || !strings.Contains(stdout, "listening on http://127.0.0.1:")):
				t.Errorf("exit status %d, output %q", status, stdout)
			}
		})
	}
	for _, c := range []string{"test", "lint", "cases", "diff", "serve"} {
		if !seen[c] {
			t.Errorf("the README shows no %s command", c)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}
