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
	segs     [][]byte // literal runs between the wildcards
	anchored bool     // the pattern ended in "$"
}

// Compile normalises a pattern as written in a robots.txt file (see
// NormalizePattern) and prepares it for matching. Per RFC 9309 section
// 2.2.3, "*" matches any run of octets, "/" included, and a final "$"
// anchors the end of the path; without it a pattern is a prefix.
func Compile(p string) (Pattern, error) {
	norm, err := NormalizePattern(p)
	if err != nil {
		return Pattern{}, err
	}
	body := norm
	anchored := strings.HasSuffix(body, "$")
	if anchored {
		body = body[:len(body)-1]
	}
	parts := strings.Split(body, "*")
	segs := make([][]byte, len(parts))
	for i, s := range parts {
		segs[i] = []byte(s)
	}
	return Pattern{norm: norm, segs: segs, anchored: anchored}, nil
}

// String returns the normalised pattern.
func (p Pattern) String() string { return p.norm }

// Len returns the length of the normalised pattern, wildcards and anchor
// included, by which RFC 9309 section 2.2.2 ranks matching rules.
func (p Pattern) Len() int { return len(p.norm) }

// Prefix returns the literal text that every matching path starts with:
// the pattern up to its first wildcard.
func (p Pattern) Prefix() string {
	if len(p.segs) == 0 {
		return ""
	}
	return string(p.segs[0])
}

// Match reports whether the normalised path (see AppendPath) matches p.
//
// Each literal run is placed at its leftmost possible position after the
// previous one. With "*" as the only wildcard this greedy placement never
// needs to be undone, so the cost is bounded by the path length times the
// number of runs, whatever the pattern.
func (p Pattern) Match(path []byte) bool {
	if len(p.segs) == 0 {
		return false
	}
	first := p.segs[0]
	if !bytes.HasPrefix(path, first) {
		return false
	}
	last := len(p.segs) - 1
	if last == 0 {
		return !p.anchored || len(path) == len(first)
	}
	pos := len(first)
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
	return bytes.Index(path[pos:], tail) >= 0
}
