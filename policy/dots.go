package policy

import "strings"

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
	segs := strings.Split(path[1:], "/")
	dots := false
	for _, s := range segs {
		if dotSegment(s) != "" {
			dots = true
			break
		}
	}
	if !dots {
		return "", false
	}
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
