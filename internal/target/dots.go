package target

import (
	"encoding/binary"
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
// server may serve for it (DESIGN.md, "What is decided"): resolved, its
// path with dot segments resolved, and merged, its path with runs of
// slashes merged into one and then dot segments resolved. Each is "" when
// it is no different from requestURI or from resolved, as for most paths,
// which cost no copy. A fragment is not sent, so it is dropped first.
func Alternates(requestURI string) (resolved, merged string) {
	if !strings.HasPrefix(requestURI, "/") || !mayHaveAlternates(requestURI) {
		return "", ""
	}
	requestURI = cutFragment(requestURI)
	path := requestURI
	if i := strings.IndexByte(requestURI, '?'); i >= 0 {
		path = requestURI[:i]
	}
	resolved, _ = ResolveDots(requestURI)
	if !strings.Contains(path, "//") {
		return resolved, ""
	}
	var b strings.Builder
	b.Grow(len(requestURI))
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 && path[i-1] == '/' {
			continue
		}
		b.WriteByte(path[i])
	}
	b.WriteString(requestURI[len(path):])
	merged = b.String()
	if r, ok := ResolveDots(merged); ok {
		merged = r
	}
	if merged == requestURI || merged == resolved {
		merged = ""
	}
	return resolved, merged
}

// mayHaveAlternates reports whether requestURI may have forms other than
// itself (see Alternates): its path, up to the first "?" or "#", has a
// slash followed by ".", "/" or "%", the only ways a dot segment ("%2E"
// is a dot too) or a run of slashes can start. It may answer true for a
// path without alternates, never false for one with them.
//
// Every decision asks it, through Alternates, and almost every answer is
// false, so it tests seven octets a step, or in a long path, whose
// slashes are far apart, finds each slash with strings.IndexByte.
func mayHaveAlternates(requestURI string) bool {
	s := requestURI
	if len(s) > longPath {
		for i := 0; ; {
			j := strings.IndexByte(s[i:], '/')
			if j < 0 || i+j+1 == len(s) {
				return false
			}
			i += j + 1
			if c := s[i]; c|1 == '/' || c == '%' {
				// Only what comes before the first "?" or "#" is path.
				return strings.IndexAny(s[:i], "?#") < 0
			}
		}
	}
	const (
		ones  = 0x0101010101010101
		slash = '/' * ones
		pct   = '%' * ones
		query = '?' * ones
		frag  = '#' * ones
		// Octets 0 to 6: octet 7 has no neighbour within the word, so
		// the next word starts there.
		inner = 0x0080808080808080
	)
	for ; len(s) >= 8; s = s[7:] {
		x := binary.LittleEndian.Uint64([]byte(s[:8]))
		slashes := zeroOctets(x ^ slash)
		// "." and "/" are 0x2E and 0x2F: setting the low bit of every
		// octet makes them, and nothing else, a slash.
		starts := zeroOctets((x|ones)^slash) | zeroOctets(x^pct)
		hits := slashes & (starts >> 8) & inner
		if end := zeroOctets(x^query) | zeroOctets(x^frag); end != 0 {
			// The path ends at the first "?" or "#": count the hits
			// before it.
			return hits&(end&-end-1) != 0
		}
		if hits != 0 {
			return true
		}
	}
	for i := 0; i+1 < len(s); i++ {
		switch c := s[i+1]; {
		case s[i] == '?' || s[i] == '#':
			return false
		case s[i] == '/' && (c|1 == '/' || c == '%'):
			return true
		}
	}
	return false
}

// longPath is the length above which mayHaveAlternates looks only at
// slashes: a call of strings.IndexByte costs more than a short path takes
// to read seven octets a step.
const longPath = 64

// zeroOctets returns x with 0x80 in each octet that is zero in x and 0
// elsewhere, exactly: no carry crosses from one octet into the next.
func zeroOctets(x uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	return ^((x&low7 + low7) | x | low7)
}
