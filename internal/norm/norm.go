// Package norm holds the one ASCII case-folding routine that field names
// and product tokens share. RFC 9309 field names and product tokens are
// ASCII, so folding only A-Z keeps non-ASCII octets as they are and never
// changes a string's length, unlike strings.ToLower.
package norm

// AppendLower appends b with A-Z lower-cased to dst and returns the
// extended slice.
func AppendLower[S ~string | ~[]byte](dst []byte, b S) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
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
