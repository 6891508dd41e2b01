// Package target reads what robots.txt rules are matched against: the
// path and query of a URL, and the other forms of it that a server may
// serve (dot segments resolved, repeated slashes merged). The robotstxt
// command, the explorer, the policy package and the transport share it so
// that they decide alike.
package target

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/crawlkit/robots/match"
)

// ErrTarget is returned by Target for input that is neither a path nor an
// http or https URL.
var ErrTarget = errors.New("not a path or an http(s) URL")

// Target returns the path and query that robots.txt rules are matched
// against for s, which is either a path starting with "/" (taken as it is,
// even when it starts with "//") or an absolute http or https URL. The
// fragment is dropped and an empty path becomes "/". A path's octets are
// kept as written: escapes are not decoded, so Target("/a%2Fb") is
// "/a%2Fb". A URL's are those net/http sends for it, which the transport
// decides: as written, unless the path's escaping is not one Go keeps (a
// raw "|" or "é" beside a "%3B"), when Go sends the path escaped anew. A
// URL Go cannot read ("http://a b/", "http://h/%zz"), which the transport
// refuses unsent, is an error wrapping ErrTarget.
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
	u, err := url.Parse(s)
	if err != nil {
		// The transport cannot send it either: it refuses it unsent.
		return "", fmt.Errorf("%w: %v", ErrTarget, err)
	}
	return u.RequestURI(), nil
}

func cutFragment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

// robotsTxt is the path that is always allowed (RFC 9309 section 2.5).
const robotsTxt = "/robots.txt"

// IsRobotsPath reports whether the normalised path and query (see
// match.AppendPath) names /robots.txt itself, whatever its query: a
// crawler must be able to read the rules that would refuse it.
func IsRobotsPath(norm []byte) bool {
	return len(norm) >= len(robotsTxt) && string(norm[:len(robotsTxt)]) == robotsTxt &&
		(len(norm) == len(robotsTxt) || norm[len(robotsTxt)] == '?')
}

// IsRobotsTxt reports whether requestURI, once normalised, names
// /robots.txt itself, whatever its query ("/%72obots.txt?x=1" does).
func IsRobotsTxt(requestURI string) bool {
	path, _, _ := strings.Cut(requestURI, "?")
	if len(path) > 3*len(robotsTxt) {
		// Longer than any spelling of it, each octet escaped.
		return false
	}
	if strings.IndexByte(path, '%') < 0 {
		// Without an escape to decode, normalising only escapes bytes
		// that /robots.txt does not have, and drops a fragment.
		return cutFragment(path) == robotsTxt
	}
	var buf [3 * len(robotsTxt)]byte
	return IsRobotsPath(match.AppendPath(buf[:0], path))
}
