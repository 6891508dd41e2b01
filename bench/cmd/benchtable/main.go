// Command benchtable turns the output of the bench module's benchmarks
// into the results table of bench/README.md: the median of every metric
// for this project ("ours") and github.com/temoto/robotstxt ("peer") side
// by side, then whether each speed target of the comparison is met.
//
// Usage:
//
//	benchtable [-w file] [bench.txt]
//
// It reads go test -bench output from the named file or standard input.
// Without -w it prints the table; with -w it writes it into file, in place
// of whatever lies between the lines "<!-- benchtable -->" and
// "<!-- /benchtable -->", so that the published table is always exactly
// what the tool printed.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const (
	beginMarker = "<!-- benchtable -->\n"
	endMarker   = "<!-- /benchtable -->\n"
)

func main() {
	write := flag.String("w", "", "write the table into `file` between its markers instead of printing it")
	flag.Parse()
	if err := run(*write, flag.Args(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(write string, args []string, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	switch len(args) {
	case 0:
	case 1:
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	default:
		return errors.New("usage: benchtable [-w file] [bench.txt]")
	}
	res, err := parseOutput(in)
	if err != nil {
		return err
	}
	var table strings.Builder
	if err := writeTable(&table, res); err != nil {
		return err
	}
	if write == "" {
		_, err := io.WriteString(stdout, table.String())
		return err
	}
	doc, err := os.ReadFile(write)
	if err != nil {
		return err
	}
	doc, err = replaceBetween(doc, table.String())
	if err != nil {
		return fmt.Errorf("%s: %w", write, err)
	}
	return os.WriteFile(write, doc, 0o644)
}

// replaceBetween returns doc with the text between its begin and end
// marker lines replaced by table.
func replaceBetween(doc []byte, table string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(beginMarker))
	end := bytes.Index(doc, []byte(endMarker))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("no %q line followed by a %q line",
			strings.TrimSpace(beginMarker), strings.TrimSpace(endMarker))
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(beginMarker)])
	out.WriteString(table)
	out.Write(doc[end:])
	return out.Bytes(), nil
}
