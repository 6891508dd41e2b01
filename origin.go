package robots

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// errNoHost is returned for an http or https URL without a host.
var errNoHost = errors.New("robots: URL has no host")

// origin is what a transport holds in memory for one origin: its parsed
// robots state and a pointer to its politeness schedule, which the pacer
// owns. It is safe for concurrent use.
type origin struct {
	id originID // its id in the table
	// key is the origin key, the origin's key in the store:
	// scheme://host[:port], or for a Host override
	// scheme://site|dialhost[:port] (target.go).
	key string

	// st is read on every request and written only after a fetch, so it
	// is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// sched is the origin's schedule in the pacer's table, nil until the
	// first request looks it up.
	sched atomic.Pointer[schedule]
}

// current returns the origin's state, or nil before the first lookup.
func (o *origin) current() *state { return o.st.Load() }

// originID identifies an origin in the table without building a string:
// the scheme and the canonical host[:port], which a canonically spelled URL
// already holds as its u.Host.
type originID struct {
	https bool
	host  string
}

// identify returns the id of the origin whose robots.txt governs u. A
// URL that spells its origin canonically (canonicalHost), as most do,
// gives it without building a string.
func identify(u *url.URL) (originID, error) {
	if canonicalHost(u) {
		return originID{https: u.Scheme == "https", host: u.Host}, nil
	}
	key, err := originOf(u)
	if err != nil {
		return originID{}, err
	}
	return idOf(key), nil
}

// idOf returns the id of an origin key. A Host override's key holds a
// "|", which no host does, so it never meets a plain origin's.
func idOf(key string) originID {
	scheme, host, _ := strings.Cut(key, "://")
	return originID{https: scheme == "https", host: host}
}

// key returns the origin key that id identifies: idOf(id.key()) == id.
func (id originID) key() string {
	if id.https {
		return "https://" + id.host
	}
	return "http://" + id.host
}

// originOf returns the origin whose robots.txt governs u, as
// scheme://host[:port]: RFC 9309 section 2.3 scopes a robots.txt file to
// its scheme, host and port. The scheme and host are lower-cased, a
// trailing dot is folded ("site.example." is "site.example"), an
// internationalised host is written in its ASCII lookup form and a default
// port is dropped, so that every spelling of one origin shares one
// robots.txt.
func originOf(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + strings.ToLower(host) + "]"
	} else {
		var err error
		if host, err = asciiHost(host); err != nil {
			return "", err
		}
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "", fmt.Errorf("robots: invalid port %q", p)
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			host += ":" + strconv.FormatUint(n, 10)
		}
	}
	// url.URL escapes what a host cannot hold literally (an IPv6 zone's
	// "%", say), so the origin parses back to itself.
	return (&url.URL{Scheme: scheme, Host: host}).String(), nil
}

// asciiHost returns host as DNS and the Host header see it: a trailing dot
// folded, lower-cased, and a non-ASCII name in the ASCII form of the IDNA
// lookup profile (UTS #46, RFC 5891 section 5).
func asciiHost(host string) (string, error) {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", errNoHost
	}
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("robots: host %q is not valid UTF-8", host)
	}
	if isASCII(host) {
		// Lower-casing is all the lookup profile does to an ASCII name,
		// and skipping it keeps names it would reject (an underscore)
		// reachable, as net/http keeps them.
		return strings.ToLower(host), nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("robots: host %q: %w", host, err)
	}
	return strings.TrimSuffix(a, "."), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// canonicalHost reports whether u already spells its origin as originOf
// would: a lower-case http or https scheme, a host of lower-case ASCII
// letters, digits, '.' and '-' without a trailing dot, and no port or one
// without leading zeros that is not the scheme's default. Such a URL's
// u.Host is its origin's host, with no string to build.
func canonicalHost(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	host, port, hasPort := u.Host, "", false
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port, hasPort = host[:i], host[i+1:], true
	}
	if host == "" || host[len(host)-1] == '.' {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	if hasPort {
		n := 0
		for i := 0; i < len(port); i++ {
			if c := port[i]; '0' <= c && c <= '9' && i < 5 {
				n = n*10 + int(c-'0')
			} else {
				return false
			}
		}
		if port == "" || port[0] == '0' || n > 65535 ||
			u.Scheme == "http" && n == 80 || u.Scheme == "https" && n == 443 {
			return false
		}
	}
	return true
}
