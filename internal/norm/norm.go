// Package norm holds the ASCII case folding that field names and product
// tokens share: lower-casing, comparing in any case, and comparing a
// field name eight octets at a time. RFC 9309 field names and product
// tokens are ASCII, so folding only A-Z keeps non-ASCII octets as they
// are and never changes a string's length, unlike strings.ToLower.
package norm

// AppendLower appends b with A-Z lower-cased to dst and returns the
// extended slice.
func AppendLower[S ~string | ~[]byte](dst []byte, b S) []byte {
	for i := 0; i < len(b); i++ {
		dst = append(dst, lower(b[i]))
	}
	return dst
}

// lower returns c lower-cased if it is A-Z, else c: the one folding.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Lower returns s with A-Z lower-cased, s itself when it has none.
func Lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return string(AppendLower(make([]byte, 0, len(s)), s))
		}
	}
	return s
}

// EqualFold reports whether a and b are equal with A-Z and a-z taken as
// equal, and no other octet folded.
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// EqualLower reports whether s, lower-cased, is lower: a string of
// lower-case letters and "-" as long as s, such as a field name. Setting
// bit 0x20 of an octet lower-cases a letter and leaves "-" as it is; of
// the octets it changes, only CR, which no line holds, would become "-"
// or a letter, so s is compared eight octets at a time.
func EqualLower(s, lower string) bool {
	for len(s) >= 8 {
		if FoldedWord(s) != Word(lower) {
			return false
		}
		s, lower = s[8:], lower[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// FoldedWord returns the first eight octets of s as Word does, with bit
// 0x20 of each set: for s of letters and "-", the Word of it lower-cased
// (see EqualLower).
func FoldedWord(s string) uint64 { return Word(s) | 0x2020202020202020 }

// Word returns the first eight octets of s, little-endian.
func Word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
