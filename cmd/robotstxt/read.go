package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/crawlkit/robots/internal/cases"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

// maxCasesSize bounds how much of a cases file is read, so that a huge or
// endless file (/dev/zero) is reported instead of filling memory.
const maxCasesSize = 64 << 20

// stdinName is how standard input, named "-" on the command line, is shown.
const stdinName = "<stdin>"

// robotsFile is a robots.txt file as a crawler reads it.
type robotsFile struct {
	name   string // as given, or stdinName
	robots *policy.Robots
	// cut is where crawlers stop reading it, or nil when they read the
	// whole file.
	cut *report.Cut
}

// loadRobots reads and parses the robots.txt file name ("-" for stdin)
// as a crawler reads it (see readRobots).
func loadRobots(name string, stdin io.Reader) (robotsFile, error) {
	f := robotsFile{name: name}
	if name == "-" {
		f.name = stdinName
	}
	data, cut, err := readRobots(name, stdin)
	if err != nil {
		return f, err
	}
	f.robots = policy.Parse(data)
	if cut {
		f.cut = &report.Cut{Line: f.robots.Lines() + 1, Bytes: len(data)}
	}
	return f, nil
}

// readRobots reads the robots.txt file name ("-" for stdin). Only what a
// crawler reads is read: policy.MaxSize bytes, and two more to tell
// whether anything but the end of a CRLF follows them. So a file of any
// size, even an endless one, costs the same. It reports whether content
// past the limit was cut.
func readRobots(name string, stdin io.Reader) (data []byte, cut bool, err error) {
	return readUpTo(name, stdin, policy.MaxSize)
}

// readUpTo reads the file name ("-" for stdin) up to limit bytes, to the
// last whole line, and reports whether more followed.
func readUpTo(name string, stdin io.Reader, limit int) (data []byte, cut bool, err error) {
	r := stdin
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return nil, false, err
		}
		defer file.Close()
		r = file
	}
	data, err = io.ReadAll(io.LimitReader(r, int64(limit)+2))
	if err != nil {
		// A file's errors name it already; stdin's do not.
		if name == "-" {
			err = fmt.Errorf("reading standard input: %w", err)
		}
		return nil, false, err
	}
	data, cut = report.CutAt(data, limit)
	return data, cut, nil
}

// warnCut tells on stderr that part of f is ignored, for the commands
// whose output has no place for file warnings.
func (f robotsFile) warnCut(cmd string, stderr io.Writer) {
	if f.cut != nil {
		fmt.Fprintf(stderr, "robotstxt %s: warning: %s:%d: %s\n", cmd, f.name, f.cut.Line, report.CutMessage)
	}
}

// errTooLarge is returned by loadCases for a file over maxCasesSize.
var errTooLarge = errors.New("larger than 64 MiB; not read")

// loadCases reads the cases file name.
func loadCases(name string) ([]cases.Case, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// A regular file's size tells at once; a pipe or device must be read.
	if info, err := file.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > maxCasesSize {
		return nil, fmt.Errorf("%s: %w", name, errTooLarge)
	}
	data, err := readCapped(file, maxCasesSize)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		return nil, err
	}
	cs, err := cases.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cs, nil
}

// readCapped reads r to its end, failing with errTooLarge after limit bytes.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return nil, err
	case int64(len(data)) > limit:
		return nil, errTooLarge
	}
	return data, nil
}
