package match

import (
	"bytes"
	"strings"
)

// Pattern is a compiled Allow or Disallow pattern. The zero Pattern matches
// nothing useful; build one with Compile. A Pattern is immutable and safe
// for concurrent use.
type Pattern struct {
	norm     string   // normalised pattern, with its "*" and final "$"
	prefix   int32    // length of the literal run before the first "*"
	anchored bool     // the pattern ended in "$"
	segs     [][]byte // with a "*": every literal run; nil without one
}

// Compile normalises a pattern as written in a robots.txt file, as
// AppendPath normalises a path, and prepares it for matching. Per RFC 9309 section
// 2.2.3, "*" matches any run of octets, "/" included, and a final "$"
// anchors the end of the path; without it a pattern is a prefix.
func Compile(p string) (Pattern, error) {
	norm, err := normalizePattern(p)
	if err != nil {
		return Pattern{}, err
	}
	body := norm
	anchored := strings.HasSuffix(body, "$")
	if anchored {
		body = body[:len(body)-1]
	}
	star := strings.IndexByte(body, '*')
	if star < 0 {
		// Most patterns are plain prefixes: compared as strings, they need
		// no copy.
		return Pattern{norm: norm, prefix: int32(len(body)), anchored: anchored}, nil
	}
	// One copy holds every run, so bytes.Index can search the path.
	b := []byte(body)
	segs := make([][]byte, 0, strings.Count(body, "*")+1)
	for {
		i := bytes.IndexByte(b, '*')
		if i < 0 {
			segs = append(segs, b)
			break
		}
		segs = append(segs, b[:i:i])
		b = b[i+1:]
	}
	return Pattern{norm: norm, prefix: int32(star), anchored: anchored, segs: segs}, nil
}

// String returns the normalised pattern.
func (p Pattern) String() string { return p.norm }

// Len returns the length of the normalised pattern, wildcards and anchor
// included, by which RFC 9309 section 2.2.2 ranks matching rules.
func (p Pattern) Len() int { return len(p.norm) }

// literalPrefix returns the literal text that every matching path starts
// with: the pattern up to its first wildcard.
func (p Pattern) literalPrefix() string { return p.norm[:p.prefix] }

// Match reports whether the normalised path (see AppendPath) matches p.
//
// Each literal run is placed at its leftmost possible position after the
// previous one. With "*" as the only wildcard this greedy placement never
// needs to be undone, so the cost is bounded by the path length times the
// number of runs, whatever the pattern.
func (p Pattern) Match(path []byte) bool {
	n := int(p.prefix)
	if p.norm == "" || len(path) < n || string(path[:n]) != p.norm[:n] {
		return false
	}
	if p.segs == nil {
		return !p.anchored || len(path) == n
	}
	last := len(p.segs) - 1
	pos := n
	for _, seg := range p.segs[1:last] {
		i := bytes.Index(path[pos:], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	tail := p.segs[last]
	if p.anchored {
		return len(path)-len(tail) >= pos && bytes.HasSuffix(path, tail)
	}
	return bytes.Contains(path[pos:], tail)
}
