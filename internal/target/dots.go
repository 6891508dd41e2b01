package target

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// ResolveDots returns requestURI with the dot segments of its path removed
// as RFC 3986 section 5.2.4 does, and whether there were any. A segment
// counts as a dot segment when it is "." or ".." once "%2E" (in either
// case) is read as ".", because servers decode it before resolving: a
// request for "/public/%2e%2e/private" reaches "/private". The query is
// kept as it is.
func ResolveDots(requestURI string) (string, bool) {
	if !strings.HasPrefix(requestURI, "/") {
		return "", false
	}
	path, query, hasQuery := strings.Cut(requestURI, "?")
	if !strings.Contains(path, "/.") && !strings.Contains(path, "/%2") {
		// A dot segment starts right after a slash, with "." or "%2E":
		// without either, the common case, there is none.
		return "", false
	}
	if !hasDotSegment(path) {
		// "/.well-known/" and dot files start the same way.
		return "", false
	}
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch dotSegment(s) {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		// "/a/b/.." names the directory "/a/", so a final dot segment
		// leaves the trailing slash.
		if last {
			out = append(out, "")
		}
	}
	resolved := "/" + strings.Join(out, "/")
	if hasQuery {
		resolved += "?" + query
	}
	return resolved, true
}

// hasDotSegment reports whether path, which starts with "/", has a dot
// segment, without copying it.
func hasDotSegment(path string) bool {
	for rest := path[1:]; ; {
		seg, after, more := strings.Cut(rest, "/")
		if dotSegment(seg) != "" {
			return true
		}
		if !more {
			return false
		}
		rest = after
	}
}

// dotSegment returns "." or ".." when s is that dot segment, written with
// literal dots or %2E escapes, and "" otherwise.
func dotSegment(s string) string {
	if len(s) > 6 || s == "" {
		return ""
	}
	d := strings.ReplaceAll(strings.ReplaceAll(s, "%2e", "."), "%2E", ".")
	if d == "." || d == ".." {
		return d
	}
	return ""
}

// Alternates returns the forms of requestURI other than itself that a
// server may serve for it: resolved, its path with dot segments resolved;
// merged, its path with runs of slashes merged into one and then dot
// segments resolved; and decoded, the form a server that decodes "%2F"
// before resolving dot segments serves (as Go's http.FileServer and nginx
// do), given only when the decoding reveals a dot segment: for
// "/public/..%2fprivate" it is "/private", while "/a%2Fb" has none, since
// "%2F" is not "/" to robots.txt (RFC 9309 section 2.2.2). Each is "" when
// it is no different from requestURI or from a form before it, as for most
// paths, which cost no copy. A fragment is not sent, so it is dropped
// first.
func Alternates(requestURI string) (resolved, merged, decoded string) {
	if !strings.HasPrefix(requestURI, "/") || !mayHaveAlternates(requestURI) {
		return "", "", ""
	}
	requestURI = cutFragment(requestURI)
	path := requestURI
	if i := strings.IndexByte(requestURI, '?'); i >= 0 {
		path = requestURI[:i]
	}
	resolved, _ = ResolveDots(requestURI)
	if strings.Contains(path, "//") {
		merged = mergeSlashes(requestURI, len(path))
		if merged == requestURI || merged == resolved {
			merged = ""
		}
	}
	if hasDecodedDotSegment(path) {
		// The server serves the clean path: decoded, merged, resolved.
		d := decodeSlashes(path)
		decoded = mergeSlashes(d+requestURI[len(path):], len(d))
		if decoded == resolved || decoded == merged {
			decoded = ""
		}
	}
	return resolved, merged, decoded
}

// mergeSlashes returns requestURI with the runs of slashes of its path,
// its first pathLen octets, merged into one, and then its dot segments
// resolved.
func mergeSlashes(requestURI string, pathLen int) string {
	var b strings.Builder
	b.Grow(len(requestURI))
	for i := 0; i < pathLen; i++ {
		if requestURI[i] == '/' && i > 0 && requestURI[i-1] == '/' {
			continue
		}
		b.WriteByte(requestURI[i])
	}
	b.WriteString(requestURI[pathLen:])
	merged := b.String()
	if r, ok := ResolveDots(merged); ok {
		merged = r
	}
	return merged
}

// hasDecodedDotSegment reports whether path, which starts with "/", has
// a dot segment once "%2F" is read as "/" and no dot segment before,
// without copying it: some segment between slashes or escaped slashes,
// with at least one escaped slash beside it, is a dot segment.
func hasDecodedDotSegment(path string) bool {
	if indexEscapedSlash(path) < 0 {
		return false
	}
	escapedBefore := false
	for rest := path[1:]; ; {
		end, next, escaped := len(rest), len(rest), false
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			end, next = i, i+1
		}
		if i := indexEscapedSlash(rest[:end]); i >= 0 {
			end, next, escaped = i, i+3, true
		}
		if (escapedBefore || escaped) && dotSegment(rest[:end]) != "" {
			return true
		}
		if next >= len(rest) && end == len(rest) {
			return false
		}
		rest, escapedBefore = rest[next:], escaped
	}
}

// decodeSlashes returns path with every "%2F" (in either case) read as
// "/".
func decodeSlashes(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := indexEscapedSlash(path); i >= 0; i = indexEscapedSlash(path) {
		b.WriteString(path[:i])
		b.WriteByte('/')
		path = path[i+3:]
	}
	b.WriteString(path)
	return b.String()
}

// indexEscapedSlash returns the index of the first "%2F" or "%2f" in s,
// or -1.
func indexEscapedSlash(s string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], "%2")
		if j < 0 {
			return -1
		}
		i += j
		if i+2 < len(s) && s[i+2]|0x20 == 'f' {
			return i
		}
		i += 2
	}
}

// escapedSlashStarts reports whether s[i:] is an escaped slash, "%2F" in
// either case, followed by "." or "%": the only way a dot segment can
// start that a server decoding "%2F" sees and a slash-by-slash reading does
// not ("%2E" is a dot too).
func escapedSlashStarts(s string, i int) bool {
	return i+3 < len(s) && s[i] == '%' && s[i+1] == '2' && s[i+2]|0x20 == 'f' && (s[i+3] == '.' || s[i+3] == '%')
}

// mayHaveAlternates reports whether requestURI may have forms other than
// itself (see Alternates): its path, up to the first "?" or "#", has a
// slash followed by ".", "/" or "%", the only ways a dot segment ("%2E"
// is a dot too) or a run of slashes can start, or an escaped slash
// followed by "." or "%" (see escapedSlashStarts). It may answer true for
// a path without alternates, never false for one with them.
//
// Every decision asks it, through Alternates, and almost every answer is
// false, so it tests seven octets a step, or in a long path, whose
// slashes are far apart, finds each slash with strings.IndexByte; only an
// escape starting "%2" sends it to look at the octets after it.
func mayHaveAlternates(requestURI string) bool {
	s := requestURI
	if len(s) > longPath {
		for i := 0; ; {
			j := strings.IndexByte(s[i:], '/')
			if j < 0 || i+j+1 == len(s) {
				break
			}
			i += j + 1
			if c := s[i]; c|1 == '/' || c == '%' {
				// Only what comes before the first "?" or "#" is path.
				if !strings.ContainsAny(s[:i], "?#") {
					return true
				}
				break
			}
		}
		for i := 0; ; i++ {
			j := strings.IndexByte(s[i:], '%')
			if j < 0 {
				return false
			}
			if i += j; escapedSlashStarts(s, i) {
				return !strings.ContainsAny(s[:i], "?#")
			}
		}
	}
	const (
		ones  = 0x0101010101010101
		slash = '/' * ones
		pct   = '%' * ones
		query = '?' * ones
		frag  = '#' * ones
		two   = '2' * ones
		// Octets 0 to 6: octet 7 has no neighbour within the word, so
		// the next word starts there.
		inner = 0x0080808080808080
	)
	for ; len(s) >= 8; s = s[7:] {
		x := binary.LittleEndian.Uint64([]byte(s[:8]))
		slashes := zeroOctets(x ^ slash)
		pcts := zeroOctets(x ^ pct)
		// "." and "/" are 0x2E and 0x2F: setting the low bit of every
		// octet makes them, and nothing else, a slash.
		starts := zeroOctets((x|ones)^slash) | pcts
		hits := slashes & (starts >> 8) & inner
		if hits|pcts == 0 {
			// The path ends at the first "?": nothing further counts. A
			// "#" is rare enough to be looked for only before a "true".
			if zeroOctets(x^query) != 0 {
				return false
			}
			continue
		}
		// An escaped slash starts "%2": only those escapes are looked at
		// (escapedSlashIn), and only in a word that has a "%"; one in
		// octet 7 is the next word's first.
		escapes := pcts & (zeroOctets(x^two) >> 8)
		end := zeroOctets(x^query) | zeroOctets(x^frag)
		if end != 0 {
			// The path ends at the first "?" or "#": count only what
			// comes before it.
			before := end&-end - 1
			hits, escapes = hits&before, escapes&before
		}
		if hits != 0 || escapedSlashIn(s, escapes) {
			return strings.IndexByte(requestURI[:len(requestURI)-len(s)], '#') < 0
		}
		if end != 0 {
			return false
		}
	}
	for i := 0; i+1 < len(s); i++ {
		switch c := s[i+1]; s[i] {
		case '?', '#':
			return false
		case '/':
			if c|1 == '/' || c == '%' {
				return strings.IndexByte(requestURI[:len(requestURI)-len(s)], '#') < 0
			}
		case '%':
			if escapedSlashStarts(s, i) {
				return strings.IndexByte(requestURI[:len(requestURI)-len(s)], '#') < 0
			}
		}
	}
	return false
}

// escapedSlashIn reports whether one of the octets "%" marked in pcts (0x80
// in each, as zeroOctets gives them) of the word at the start of s starts
// an escaped slash that may start a dot segment (see escapedSlashStarts).
func escapedSlashIn(s string, pcts uint64) bool {
	for ; pcts != 0; pcts &= pcts - 1 {
		if escapedSlashStarts(s, bits.TrailingZeros64(pcts)/8) {
			return true
		}
	}
	return false
}

// longPath is the length above which mayHaveAlternates looks only at
// slashes: a call of strings.IndexByte costs more than a short path takes
// to read seven octets a step.
const longPath = 64

// zeroOctets returns x with 0x80 in each octet that is zero in x, in
// three operations. It is exact up to and including the lowest zero
// octet; above it a borrow may mark an octet that is not zero.
// mayHaveAlternates can take that: its lowest mark of a "?" or "#" is
// exact, and a stray mark elsewhere can only make it answer true, which
// it may.
func zeroOctets(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x - ones) &^ x & highs
}
