package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/crawlkit/robots/policy"
)

// command is a subcommand's flags and the text that explains them.
type command struct {
	fl       *flag.FlagSet
	synopsis string // the usage lines
	help     string // what the command does and its exit status
	stdout   io.Writer
	stderr   io.Writer
}

// newCommand returns a command whose flag errors go to stderr.
func newCommand(name, synopsis, help string, stdout, stderr io.Writer) *command {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	// The flag package calls Usage both for -h and after saying what is
	// wrong with a flag; parse prints what each case needs instead.
	fl.Usage = func() {}
	return &command{fl: fl, synopsis: synopsis, help: help, stdout: stdout, stderr: stderr}
}

// parse parses args and returns the positional arguments. When the
// command is over (-h, or a bad flag) done is true and status is its exit
// status: -h prints the help on stdout and succeeds.
func (c *command) parse(args []string) (positional []string, status int, done bool) {
	positional, err := parseFlags(c.fl, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(c.stdout, "%s\n%s\nFlags:\n", c.synopsis, c.help)
		c.fl.SetOutput(c.stdout)
		c.fl.PrintDefaults()
		c.fl.SetOutput(c.stderr)
		return nil, 0, true
	case err != nil:
		c.shortUsage()
		return nil, 2, true
	}
	return positional, 0, false
}

// usageError reports bad usage on stderr and returns exit status 2.
func (c *command) usageError(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "robotstxt %s: %s\n", c.fl.Name(), fmt.Sprintf(format, args...))
	c.shortUsage()
	return 2
}

func (c *command) shortUsage() {
	fmt.Fprintf(c.stderr, "%sRun 'robotstxt %s -h' for help.\n", c.synopsis, c.fl.Name())
}

// parseFlags parses args with fl, letting flags follow the positional
// arguments too (robotstxt test /a /b -json), as people type them; after
// "--" everything is positional. It returns the positional arguments.
func parseFlags(fl *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// agentList is the -agent flag: product tokens, most specific first,
// from repeated flags or comma-separated lists.
type agentList struct {
	tokens []string
	// notes say which full User-Agent strings were read as their token.
	notes []string
}

func (a *agentList) String() string {
	if a == nil {
		return ""
	}
	return strings.Join(a.tokens, ",")
}

// Set adds the tokens of one -agent value: a comma-separated list of
// product tokens, or one full User-Agent string (which may itself hold
// commas, as in "(KHTML, like Gecko)"), read as its leading product token.
func (a *agentList) Set(value string) error {
	value = strings.TrimSpace(value)
	if value == "" {
		return errors.New("empty agent")
	}
	list := strings.Split(value, ",")
	for i, t := range list {
		list[i] = strings.TrimSpace(t)
		if !isToken(list[i]) {
			list = nil
			break
		}
	}
	if list != nil {
		a.tokens = append(a.tokens, list...)
		return nil
	}
	token := policy.ProductToken(value)
	if token == "" {
		return fmt.Errorf("%q has no product token (letters, digits, - and _)", value)
	}
	a.tokens = append(a.tokens, token)
	a.notes = append(a.notes, fmt.Sprintf("agent %q read as its product token %q", value, token))
	return nil
}

// isToken reports whether s is a whole product token, or "*".
func isToken(s string) bool {
	return s == "*" || s != "" && policy.ProductToken(s) == s
}

// writeOutput writes a command's result to stdout: v as indented JSON when
// asJSON, else what text writes. It reports whether the write succeeded,
// telling stderr why not.
func writeOutput(cmd string, stdout, stderr io.Writer, asJSON bool, v any, text func(io.Writer)) bool {
	w := bufio.NewWriter(stdout)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		// The values always encode; a write error shows in Flush.
		enc.Encode(v)
	} else {
		text(w)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "robotstxt %s: %v\n", cmd, err)
		return false
	}
	return true
}
