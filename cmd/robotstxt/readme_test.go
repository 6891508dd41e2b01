package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/robots/internal/explorer"
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

// guides are the user's documents whose commands and requests the tests
// run: the README and the reference in docs/.
func guides(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range append([]string{"../../README.md"}, names...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(name, "../../")] = string(data)
	}
	return out
}

// TestREADME runs every robotstxt command the README and the docs show,
// from the repository's root as a reader would, so that none goes stale:
// none may be bad usage, and what they say of their outcome must hold: a
// command whose comment says it "passes" exits 0, one that "fails" or
// "changes" exits 1.
func TestREADME(t *testing.T) {
	docs := guides(t)
	readme := docs["README.md"]
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

	if len(readmeCommands(t, readme)) == 0 {
		t.Error("the README shows no robotstxt command")
	}
	var cmds []readmeCommand
	for _, text := range docs {
		cmds = append(cmds, readmeCommands(t, text)...)
	}
	if len(cmds) < 4 {
		t.Fatalf("found %d robotstxt commands in the README and docs, want at least test, lint, cases and serve: %q", len(cmds), cmds)
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
			t.Errorf("neither the README nor docs/ shows a %s command", c)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

// readmeCall is a curl line of the README and the JSON answer shown after
// it.
type readmeCall struct {
	line, path, body, want string
}

// curlLine reads the README's curl lines: the API path on the explorer's
// default address and the -d '...' body.
var curlLine = regexp.MustCompile(`^curl -s http://127\.0\.0\.1:8080(/api/\w+) -H 'Content-Type: application/json' -d '([^']*)'$`)

// readmeCalls returns the curl lines of the README's sh blocks, each with
// the json block that follows it.
func readmeCalls(t *testing.T, readme string) []readmeCall {
	t.Helper()
	var calls []readmeCall
	block, pending := "", -1 // the open block's kind; the call waiting for its answer
	var body strings.Builder
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```") && block == "":
			block = strings.TrimPrefix(line, "```")
			body.Reset()
		case strings.HasPrefix(line, "```"):
			if block == "json" && pending >= 0 {
				calls[pending].want, pending = body.String(), -1
			}
			block = ""
		case block == "json":
			body.WriteString(line + "\n")
		case block == "sh" && strings.HasPrefix(line, "curl "):
			m := curlLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("README curl line not in the form the test replays: %s", line)
			}
			calls = append(calls, readmeCall{line: line, path: m[1], body: m[2]})
			pending = len(calls) - 1
		}
	}
	return calls
}

// TestREADMEAPI replays every curl line of the README and the docs (the
// explorer's API is in docs/command.md) against the explorer and compares
// each answer with the JSON shown after it (times aside), so that the
// API's documentation stays true.
func TestREADMEAPI(t *testing.T) {
	var calls []readmeCall
	for _, text := range guides(t) {
		calls = append(calls, readmeCalls(t, text)...)
	}
	seen := map[string]bool{}
	srv := httptest.NewServer(explorer.New(explorer.Options{}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range calls {
		seen[c.path] = true
		t.Run(c.path, func(t *testing.T) {
			body := strings.ReplaceAll(c.body, "127.0.0.1:8080", addr)
			resp, err := srv.Client().Post(srv.URL+c.path, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got, want any
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: status %d, %v", c.line, resp.StatusCode, err)
			}
			if err := json.Unmarshal([]byte(strings.ReplaceAll(c.want, "127.0.0.1:8080", addr)), &want); err != nil {
				t.Fatalf("the README's answer to %s is not JSON: %v\n%s", c.path, err, c.want)
			}
			dropTimes(got)
			dropTimes(want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s answers\n%s\nthe README shows\n%s", c.path, g, w)
			}
		})
	}
	for _, p := range []string{"/api/decide", "/api/lint", "/api/fetch", "/api/compare"} {
		if !seen[p] {
			t.Errorf("neither the README nor docs/ shows a curl example of %s", p)
		}
	}
}

// dropTimes removes the times of a fetch answer, which differ per run.
func dropTimes(v any) {
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"fetchedAt", "expires", "retryAt"} {
			delete(m, k)
		}
	}
}
