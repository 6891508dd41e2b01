// Command benchtable turns the output of the bench module's benchmarks
// into the results tables of bench/README.md: the median of every metric
// for this project ("ours") and github.com/temoto/robotstxt ("peer") side
// by side, then whether each speed target of the comparison is met; and
// the medians of the transport benchmarks at each GOMAXPROCS, then whether
// each target on the transport's overhead is met.
//
// Usage:
//
//	benchtable [-w file] [bench.txt]
//
// It reads go test -bench output from the named file or standard input.
// Without -w it prints the two tables; with -w it writes each into file,
// in place of whatever lies between its marker lines, "<!-- benchtable -->"
// and "<!-- /benchtable -->" for the comparison, "<!-- benchtable
// transport -->" and "<!-- /benchtable transport -->" for the transport,
// so that the published tables are always exactly what the tool printed.
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

// block is one generated part of the README and the lines around it.
type block struct {
	begin, end string
	write      func(*strings.Builder, *results) error
}

var blocks = []block{
	{"<!-- benchtable -->\n", "<!-- /benchtable -->\n", writeComparison},
	{"<!-- benchtable transport -->\n", "<!-- /benchtable transport -->\n", writeTransport},
}

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
	tables := make([]string, len(blocks))
	for i, bl := range blocks {
		var b strings.Builder
		if err := bl.write(&b, res); err != nil {
			return err
		}
		tables[i] = b.String()
	}
	if write == "" {
		_, err := io.WriteString(stdout, strings.Join(tables, "\n"))
		return err
	}
	doc, err := os.ReadFile(write)
	if err != nil {
		return err
	}
	for i, bl := range blocks {
		if doc, err = replaceBetween(doc, bl, tables[i]); err != nil {
			return fmt.Errorf("%s: %w", write, err)
		}
	}
	return os.WriteFile(write, doc, 0o644)
}

// replaceBetween returns doc with the text between bl's begin and end
// marker lines replaced by table.
func replaceBetween(doc []byte, bl block, table string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(bl.begin))
	end := bytes.Index(doc, []byte(bl.end))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("no %q line followed by a %q line",
			strings.TrimSpace(bl.begin), strings.TrimSpace(bl.end))
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(bl.begin)])
	out.WriteString(table)
	out.Write(doc[end:])
	return out.Bytes(), nil
}
