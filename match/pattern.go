package match

import (
	"strings"
	"unsafe"
)

// Pattern is a compiled Allow or Disallow pattern. The zero Pattern matches
// nothing useful; build one with Compile. A Pattern is immutable and safe
// for concurrent use.
//
// A Pattern holds only its normalised text and where its first wildcard
// is: the literal runs between wildcards are found in that text while
// matching, so a pattern whose text needs no normalising costs no
// allocation at all, and a robots.txt file with thousands of rules keeps
// no per-rule slices.
type Pattern struct {
	norm     string // normalised pattern, with its "*" and final "$"
	prefix   int32  // length of the literal run before the first "*"
	anchored bool   // the pattern ended in "$"
	wild     bool   // the pattern holds a "*"
}

// Compile normalises a pattern as written in a robots.txt file, as
// AppendPath normalises a path, and prepares it for matching. Per RFC 9309 section
// 2.2.3, "*" matches any run of octets, "/" included, and a final "$"
// anchors the end of the path; without it a pattern is a prefix.
func Compile(p string) (Pattern, error) {
	norm, err := Normalize(p)
	if err != nil {
		return Pattern{}, err
	}
	return CompileNormalized(norm), nil
}

// CompileNormalized prepares for matching a pattern that Normalize
// returned, without normalising it again, so that a parser that keeps
// normalised patterns compiles one, at no allocation, whenever it
// matches it. Given a string that Normalize would change, the Pattern
// matches that string as it is.
func CompileNormalized(norm string) Pattern {
	body := norm
	anchored := strings.HasSuffix(body, "$")
	if anchored {
		body = body[:len(body)-1]
	}
	star := strings.IndexByte(body, '*')
	if star < 0 {
		return Pattern{norm: norm, prefix: int32(len(body)), anchored: anchored}
	}
	return Pattern{norm: norm, prefix: int32(star), anchored: anchored, wild: true}
}

// String returns the normalised pattern.
func (p Pattern) String() string { return p.norm }

// Len returns the length of the normalised pattern, wildcards and anchor
// included, by which RFC 9309 section 2.2.2 ranks matching rules.
func (p Pattern) Len() int { return len(p.norm) }

// literalPrefix returns the literal text that every matching path starts
// with: the pattern up to its first wildcard.
func (p Pattern) literalPrefix() string { return p.norm[:p.prefix] }

// body returns the pattern without its end anchor.
func (p Pattern) body() string {
	if p.anchored {
		return p.norm[:len(p.norm)-1]
	}
	return p.norm
}

// firstRun returns the first non-empty literal run after the pattern's
// first wildcard, which every matching path contains somewhere after the
// prefix, or "" when the pattern has no such run ("/*", "*$").
func (p Pattern) firstRun() string {
	if !p.wild {
		return ""
	}
	rest := p.body()[p.prefix+1:]
	for rest != "" {
		i := strings.IndexByte(rest, '*')
		if i < 0 {
			return rest
		}
		if i > 0 {
			return rest[:i]
		}
		rest = rest[1:]
	}
	return ""
}

// Match reports whether the normalised path (see AppendPath) matches p.
//
// Each literal run is placed at its leftmost possible position after the
// previous one. With "*" as the only wildcard this greedy placement never
// needs to be undone, so the cost is bounded by the path length times the
// number of runs, whatever the pattern.
func (p Pattern) Match(path []byte) bool {
	return p.match(pathString(path))
}

// pathString views path as a string without copying it. The matching
// functions only read the view, and only while path is not written to,
// so that strings.Index and string comparisons can work on it directly.
func pathString(path []byte) string {
	return unsafe.String(unsafe.SliceData(path), len(path))
}

func (p Pattern) match(path string) bool {
	n := int(p.prefix)
	if p.norm == "" || len(path) < n || path[:n] != p.norm[:n] {
		return false
	}
	if !p.wild {
		return !p.anchored || len(path) == n
	}
	rest := p.body()[n+1:]
	pos := n
	for {
		i := strings.IndexByte(rest, '*')
		if i < 0 {
			break
		}
		if seg := rest[:i]; seg != "" {
			j := strings.Index(path[pos:], seg)
			if j < 0 {
				return false
			}
			pos += j + len(seg)
		}
		rest = rest[i+1:]
	}
	if p.anchored {
		return len(path)-len(rest) >= pos && strings.HasSuffix(path, rest)
	}
	return strings.Contains(path[pos:], rest)
}
