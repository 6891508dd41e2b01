package robots

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	pathtarget "github.com/crawlkit/robots/internal/target"
)

// target is the request a server will see, as net/http puts it on the
// wire: the site whose robots.txt applies and the request-URI forms the
// server may serve for it. Deciding anything else lets a request reach a
// resource its robots.txt disallows.
type target struct {
	// url is the request's own URL.
	url *url.URL
	// id identifies the site's origin: url's own, or for a site other
	// than the one url's host names (a Host override or an absolute-form
	// request-URI) the origin key made of the site's origin, "|", and the
	// host[:port] the request is sent to.
	id originID
	// uri is the request-URI as sent, path escaped as Go escapes it on the
	// wire, query included.
	uri string
	// robotsTxt reports that uri asks for /robots.txt itself, which is
	// always allowed.
	robotsTxt bool
	// header is the request's header, nil for Check and Robots: its
	// User-Agent names the crawler when Options does not.
	header http.Header
}

// isHTTP reports whether scheme is one that robots.txt governs.
func isHTTP(scheme string) bool {
	return scheme == "http" || scheme == "https" ||
		strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// errBadHost is the error for a Host override that net/http would rewrite
// or a server could read as another site.
var errBadHost = errors.New("robots: request Host is not an ASCII host[:port]")

// targetOf returns the target of req. A req.Host that names another site
// than req.URL's host makes that site's robots.txt apply, fetched from
// req.URL's address with the same Host header; an absolute-form Opaque
// ("//host/path", the idiom net/http documents for sending a path as is)
// names its own site and path, since a server takes them over the Host
// header (RFC 9112 section 3.2.2).
func targetOf(req *http.Request) (target, error) {
	tg, err := targetFor(req.URL, req.Host)
	tg.header = req.Header
	return tg, err
}

// targetFor is targetOf for u sent with the Host header host ("" for
// u.Host).
func targetFor(u *url.URL, host string) (target, error) {
	tg := target{url: u}
	site := ""
	switch {
	case strings.HasPrefix(u.Opaque, "//"):
		authority, path, _ := strings.Cut(u.Opaque[2:], "/")
		if authority == "" || strings.ContainsAny(authority, "@?#") {
			return tg, fmt.Errorf("robots: request-URI %q has no plain host", u.Opaque)
		}
		site = authority
		tg.uri = "/" + path
		if u.ForceQuery || u.RawQuery != "" {
			tg.uri += "?" + u.RawQuery
		}
	default:
		// Go writes the path in EscapedPath's form (or Opaque as is), so
		// that is what the server decides on and the rules must match.
		tg.uri = u.RequestURI()
	}
	tg.robotsTxt = pathtarget.IsRobotsTxt(tg.uri)
	if site == "" && host != "" && host != u.Host {
		site = host
	}
	if site != "" {
		key, err := overrideKey(u, site)
		switch {
		case err != nil:
			return tg, err
		case key != "":
			tg.id = idOf(key)
			return tg, nil
		}
	}
	var err error
	tg.id, err = identify(u)
	return tg, err
}

// overrideKey returns the origin key of site reached at u's address:
// "scheme://site|dialhost[:port]", or "" when site is u's own origin.
func overrideKey(u *url.URL, site string) (string, error) {
	if !validHost(site) {
		return "", fmt.Errorf("%w: %q", errBadHost, site)
	}
	dial, err := originOf(u)
	if err != nil {
		return "", err
	}
	named, err := originOf(&url.URL{Scheme: u.Scheme, Host: site})
	if err != nil {
		return "", err
	}
	if named == dial {
		return "", nil
	}
	_, addr, _ := strings.Cut(dial, "://")
	return named + "|" + addr, nil
}

// validHost reports whether h is a host[:port] of printable ASCII that
// reads back, as the authority of a request-URI, as exactly that host:
// net/http would punycode a non-ASCII Host and cut one at a "/", so
// either would send another site's name than the one decided.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if h[i] <= ' ' || h[i] >= 0x7f {
			return false
		}
	}
	u, err := url.ParseRequestURI("http://" + h)
	return err == nil && u.Host == h && u.User == nil && u.Path == "" && u.Hostname() != ""
}
