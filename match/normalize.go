// Package match implements the matching half of RFC 9309: the
// normalisation of URL paths and of Allow/Disallow patterns, compiled
// wildcard patterns, and a rule set that picks the winning rule for a path.
//
// Everything here is a pure function over strings and byte slices; the
// package knows nothing of HTTP or of robots.txt groups. Paths given to the
// matching functions must already be normalised with AppendPath, so that a
// path is normalised once and matched against many patterns.
package match

import "errors"

const upperHex = "0123456789ABCDEF"

// ErrInvalidEscape is returned by Compile for a pattern holding a percent
// sign that is not followed by two hexadecimal digits.
var ErrInvalidEscape = errors.New("match: % not followed by two hex digits")

// ErrSpace is returned by Compile for a pattern holding an ASCII space or
// control character, which no request path can contain.
var ErrSpace = errors.New("match: pattern contains a space or control character")

// ErrStart is returned by Compile for a pattern that starts with neither
// "/" nor "*" and so can never match a path.
var ErrStart = errors.New(`match: pattern does not start with "/" or "*"`)

// unreserved reports whether c is an RFC 3986 unreserved character, the
// only ones whose percent-escapes are decoded (RFC 9309 section 2.2.2).
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func appendEscaped(dst []byte, c byte) []byte {
	return append(dst, '%', upperHex[c>>4], upperHex[c&15])
}

// AppendPath appends the normalised form of a URL path and query to dst and
// returns the extended slice. Normalisation follows RFC 9309 section 2.2.2:
// non-ASCII octets, spaces, control characters and the ASCII characters
// that RFC 3986 does not allow raw in a URI (see rawInvalid) become
// uppercase %HH;
// escapes have their hex uppercased, and those of unreserved characters are
// decoded; a % not starting a valid escape is the literal percent sign %25.
// A literal "*" or "$" becomes %2A or %24, the only way a pattern can name
// those characters. Anything from a "#" on is a fragment and is dropped, and
// an empty path is "/".
//
// AppendPath never fails: every string is some path.
func AppendPath(dst []byte, s string) []byte {
	start := len(dst)
	for i := 0; i < len(s); {
		// Copy the run of octets that stay as they are in one go, found
		// eight octets a step.
		j := i
		for ; j+8 <= len(s); j += 8 {
			q := s[j : j+8]
			if plain[q[0]]&plain[q[1]]&plain[q[2]]&plain[q[3]]&plain[q[4]]&plain[q[5]]&plain[q[6]]&plain[q[7]] == 0 {
				break
			}
		}
		for j < len(s) && plain[s[j]] != 0 {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		c := s[j]
		i = j + 1
		switch {
		case c == '#':
			i = len(s)
		case c == '%':
			if v, ok := escapeAt(s, j); ok {
				if unreserved(v) {
					dst = append(dst, v)
				} else {
					dst = appendEscaped(dst, v)
				}
				i = j + 3
			} else {
				dst = append(dst, '%', '2', '5')
			}
		default:
			dst = appendEscaped(dst, c)
		}
	}
	if len(dst) == start {
		dst = append(dst, '/')
	}
	return dst
}

// plain marks the octets that AppendPath copies unchanged: printable ASCII
// but for "#", "%", "*", "$" and rawInvalid.
var plain = func() (t [256]uint8) {
	for c := '!'; c < 0x7f; c++ {
		if c != '#' && c != '%' && c != '*' && c != '$' && !rawInvalid[c] {
			t[c] = 1
		}
	}
	return t
}()

// rawInvalid marks the printable ASCII characters that may not appear raw
// in a URI (RFC 3986 section 2): Go's net/url sends them percent-encoded,
// so a path and a pattern hold them as %HH for the spellings to be one.
var rawInvalid = func() (t [256]bool) {
	for _, c := range []byte("\"<>\\^`{|}") {
		t[c] = true
	}
	return t
}()

// escapeAt reads the escape starting at s[i] == '%', reporting whether it
// is followed by two hex digits.
func escapeAt(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	hi, ok1 := unhex(s[i+1])
	lo, ok2 := unhex(s[i+2])
	return hi<<4 | lo, ok1 && ok2
}

// Normalize returns the normalised form of an Allow or Disallow pattern as
// written in a robots.txt file: the same normalisation as AppendPath,
// except that "*" stays a wildcard and a final "$" stays an end anchor (a
// "$" anywhere else is the literal %24). It fails with ErrInvalidEscape,
// ErrSpace or ErrStart for patterns that RFC 9309 parsers must ignore.
//
// A pattern that normalising leaves as it is, as most are, is returned
// itself, so that a parser validating every pattern allocates only for
// those it changes and can keep the result for CompileNormalized.
func Normalize(p string) (string, error) {
	if p == "" || p[0] != '/' && p[0] != '*' {
		return "", ErrStart
	}
	// Eight octets a step, their table entries combined without a branch
	// each: a pattern is most of its line.
	i := 0
	for ; i+8 <= len(p); i += 8 {
		q := p[i : i+8]
		if patternPlain[q[0]]&patternPlain[q[1]]&patternPlain[q[2]]&patternPlain[q[3]]&
			patternPlain[q[4]]&patternPlain[q[5]]&patternPlain[q[6]]&patternPlain[q[7]] == 0 {
			break
		}
	}
	for i < len(p) && patternPlain[p[i]] != 0 {
		i++
	}
	if i == len(p) || i == len(p)-1 && p[i] == '$' {
		return p, nil
	}
	b := make([]byte, i, len(p)+8)
	copy(b, p[:i])
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%':
			v, ok := escapeAt(p, i)
			if !ok {
				return "", ErrInvalidEscape
			}
			if unreserved(v) {
				b = append(b, v)
			} else {
				b = appendEscaped(b, v)
			}
			i += 2
		case c <= ' ' || c == 0x7f:
			return "", ErrSpace
		case c >= 0x80 || c == '$' && i != len(p)-1 || rawInvalid[c]:
			b = appendEscaped(b, c)
		default:
			b = append(b, c)
		}
	}
	return string(b), nil
}

// patternPlain marks the octets that Normalize keeps as they are wherever
// they are in a pattern: printable ASCII but for "%", "$" and rawInvalid.
// One lookup per octet tells a pattern that needs nothing done, the
// common case, from the others.
var patternPlain = func() (t [256]uint8) {
	for c := '!'; c < 0x7f; c++ {
		if c != '%' && c != '$' && !rawInvalid[c] {
			t[c] = 1
		}
	}
	return t
}()
