package policy

import (
	"errors"
	"strings"
)

// ErrTarget is returned by Target for input that is neither a path nor an
// http or https URL.
var ErrTarget = errors.New("policy: not a path or an http(s) URL")

// Target returns the path and query that robots.txt rules are matched
// against for s, which is either a path starting with "/" (taken as it is,
// even when it starts with "//") or an absolute http or https URL. The
// fragment is dropped and an empty path becomes "/". The octets are kept
// as written: escapes are not decoded, so Target("/a%2Fb") is "/a%2Fb".
func Target(s string) (string, error) {
	if strings.HasPrefix(s, "/") {
		return cutFragment(s), nil
	}
	var rest string
	switch {
	case len(s) >= 7 && strings.EqualFold(s[:7], "http://"):
		rest = s[7:]
	case len(s) >= 8 && strings.EqualFold(s[:8], "https://"):
		rest = s[8:]
	default:
		return "", ErrTarget
	}
	i := strings.IndexAny(rest, "/?#")
	if i == 0 {
		return "", ErrTarget // no host
	}
	if i < 0 {
		return "/", nil
	}
	path := cutFragment(rest[i:])
	if path == "" {
		return "/", nil
	}
	if path[0] == '?' {
		path = "/" + path
	}
	return path, nil
}

func cutFragment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}
