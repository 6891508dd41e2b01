package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The benchmarks name their two variants with these final elements.
const (
	oursSuffix = "/ours"
	peerSuffix = "/peer"
)

// writeComparison renders the medians of res as a markdown table of ours
// and peer side by side, followed by the verdict on every target.
func writeComparison(b *strings.Builder, res *results) error {
	type pair struct {
		base       string
		ours, peer benchKey
	}
	var pairs []pair
	runs := 0
	for _, k := range res.keys {
		base, ok := strings.CutSuffix(k.name, oursSuffix)
		if !ok {
			continue
		}
		ours, err := res.only(k.name)
		if err != nil {
			return err
		}
		peer, err := res.only(base + peerSuffix)
		if err != nil {
			return fmt.Errorf("%s has no %s counterpart: %w", k.name, peerSuffix, err)
		}
		pairs = append(pairs, pair{base, ours, peer})
		runs = max(runs, res.runs(ours), res.runs(peer))
	}
	if len(pairs) == 0 {
		return errors.New("no benchmark named .../ours")
	}

	fmt.Fprintf(b, "Medians of %d runs on %s, library at %s; %s cores, cpu %s, %s/%s. ",
		runs, or(res.config["date"]), or(res.config["library"]), or(res.config["cores"]),
		or(res.config["cpu"]), or(res.config["goos"]), or(res.config["goarch"]))
	b.WriteString("Ratio is peer ns/op ÷ ours ns/op: above 1, ours is faster.\n\n")
	b.WriteString("Held is the heap a parsed file keeps after one decision, per file and per byte of the files.\n\n")
	b.WriteString("| benchmark | ns/op ours | ns/op peer | ratio | B/op ours | B/op peer | allocs/op ours | allocs/op peer | MB/s ours | MB/s peer | held B/file ours | held B/file peer | held/size ours | held/size peer |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, p := range pairs {
		b.WriteString("| " + p.base)
		for _, unit := range []string{"ns/op", "ratio", "B/op", "allocs/op", "MB/s", "heldB/file", "held/byte"} {
			if unit == "ratio" {
				o, _ := res.median(p.ours, "ns/op")
				q, _ := res.median(p.peer, "ns/op")
				b.WriteString(" | " + formatRatio(q/o))
				continue
			}
			for _, k := range []benchKey{p.ours, p.peer} {
				b.WriteString(" | " + cell(res, k, unit))
			}
		}
		b.WriteString(" |\n")
	}

	return writeTargets(b, res)
}

// cell formats the median of k in unit, or a dash when k has none.
func cell(res *results, k benchKey, unit string) string {
	if v, ok := res.median(k, unit); ok {
		return formatValue(v, unit)
	}
	return "—"
}

func or(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// formatValue prints a median with three or more significant digits,
// grouping thousands so that large times stay readable.
func formatValue(v float64, unit string) string {
	if v < 0 {
		return "−" + formatValue(-v, unit)
	}
	switch {
	case unit == "MB/s" || unit == "held/byte" || v < 10 && v != float64(int64(v)):
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100 && v != float64(int64(v)):
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	digits := strconv.FormatFloat(v, 'f', 0, 64)
	var out []byte
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	return string(out)
}

// formatRatio prints a ratio with two decimals below 10, so that one just
// under 1 does not print as "1.0×".
func formatRatio(r float64) string {
	prec := 0
	switch {
	case r < 10:
		prec = 2
	case r < 100:
		prec = 1
	}
	return strconv.FormatFloat(r, 'f', prec, 64) + "×"
}
