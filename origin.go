package robots

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/crawlkit/robots/internal/target"
)

// An origin's identity: the request as the server will see it (its wire
// target: the site whose robots.txt applies and the request-URI), and the
// id of that origin (scheme, IDNA host, port), which names it in the
// store and in the pacer's table and says where its robots.txt is
// fetched. Everything here is a pure function of the request or the URL.

// ErrNotHTTP is what Check and Robots return, wrapped, for a URL that is
// not an absolute http or https URL with a host: no robots.txt governs it.
var ErrNotHTTP = errors.New("robots: not an http or https URL")

// errNoHost is returned for an http or https URL without a host.
var errNoHost = errors.New("robots: URL has no host")

// errBadHost is the error for a Host override that net/http would rewrite
// or a server could read as another site.
var errBadHost = errors.New("robots: request Host is not an ASCII host[:port]")

// wireTarget is the request a server will see, as net/http puts it on the
// wire: the site whose robots.txt applies and the request-URI forms the
// server may serve for it. Deciding anything else lets a request reach a
// resource its robots.txt disallows.
type wireTarget struct {
	// url is the request's own URL.
	url *url.URL
	// id identifies the origin whose robots.txt applies: url's own, or a
	// site other than the one url's host names (a Host override or an
	// absolute-form request-URI), reached at url's address.
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

// targetOf returns the wire target of req. A req.Host that names another
// site than req.URL's host makes that site's robots.txt apply, fetched
// from req.URL's address with the same Host header; an absolute-form
// Opaque ("//host/path", the idiom net/http documents for sending a path
// as is) names its own site and path, since a server takes them over the
// Host header (RFC 9112 section 3.2.2).
func targetOf(req *http.Request) (wireTarget, error) {
	tg, err := targetFor(req.URL, req.Host)
	tg.header = req.Header
	return tg, err
}

// targetFor is targetOf for u sent with the Host header host ("" for
// u.Host).
func targetFor(u *url.URL, host string) (wireTarget, error) {
	tg := wireTarget{url: u}
	site := ""
	if strings.HasPrefix(u.Opaque, "//") {
		authority, _, _ := strings.Cut(u.Opaque[2:], "/")
		if authority == "" || strings.ContainsAny(authority, "@?#") {
			return tg, fmt.Errorf("robots: request-URI %q has no plain host", u.Opaque)
		}
		site = authority
	}
	tg.uri = sentURI(u)
	tg.robotsTxt = target.IsRobotsTxt(tg.uri)
	if site == "" && host != "" && host != u.Host {
		site = host
	}
	var err error
	tg.id, err = identify(u, site)
	return tg, err
}

// urlTarget returns the wire target of a request for rawURL, which must
// be an absolute http or https URL: what Check, Robots and Preferences
// decide for.
func urlTarget(rawURL string) (wireTarget, error) {
	u, err := parseHTTP(rawURL)
	if err != nil {
		return wireTarget{}, err
	}
	return targetFor(u, "")
}

// parseHTTP parses rawURL, which must be an absolute http or https URL
// with a host: a relative reference names no origin to decide for, and
// robots.txt governs no other scheme.
func parseHTTP(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotHTTP, err)
	}
	if err := checkHTTP(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkHTTP returns an error matching ErrNotHTTP unless u is an absolute
// http or https URL with a host (in its Host, or an absolute-form
// Opaque).
func checkHTTP(u *url.URL) error {
	switch {
	case u == nil:
		return fmt.Errorf("%w: no URL", ErrNotHTTP)
	case u.Scheme == "":
		return fmt.Errorf("%w: %q is not an absolute URL: it has no scheme", ErrNotHTTP, u.Redacted())
	case !isHTTP(u.Scheme):
		return fmt.Errorf("%w: %q: robots.txt does not govern %s URLs", ErrNotHTTP, u.Redacted(), u.Scheme)
	case u.Host == "" && !strings.HasPrefix(u.Opaque, "//"):
		return fmt.Errorf("%w: %q has no host", ErrNotHTTP, u.Redacted())
	}
	return nil
}

// isHTTP reports whether scheme is one that robots.txt governs.
func isHTTP(scheme string) bool {
	return scheme == "http" || scheme == "https" ||
		strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// originID identifies an origin without building a string: RFC 9309
// section 2.3 scopes a robots.txt to its scheme, host and port. host is
// the canonical host[:port] of the site whose robots.txt applies (as
// url.URL.Host holds it), which a canonically spelled URL already holds;
// addr, for a request whose Host header or absolute-form request-URI
// names another site than its URL's host, is the canonical host[:port]
// it is sent to, and "" otherwise.
type originID struct {
	https bool
	host  string
	addr  string
}

// key returns the origin's name in the store: scheme://host[:port], or
// for a site reached at another address scheme://site|addr, a "|" being
// what no host holds. A host's characters that a URL escapes (an IPv6
// zone's "%") are escaped in it.
func (id originID) key() OriginKey {
	k := id.site()
	if id.addr != "" {
		k += "|" + strings.TrimPrefix((&url.URL{Host: id.addr}).String(), "//")
	}
	return OriginKey(k)
}

// site returns scheme://host[:port], the origin as its server sees it.
func (id originID) site() string {
	scheme := "http"
	if id.https {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: id.host}).String()
}

// urlOf returns u as the origin's server receives it: its scheme and
// Host, and the request target, without a fragment. It is the one name
// the ledger keeps a page's payment under, however a link spells it.
func (id originID) urlOf(u *url.URL) string { return id.site() + sentURI(u) }

// sentPath is the path of sentURI(u).
func sentPath(u *url.URL) string {
	path, _, _ := strings.Cut(sentURI(u), "?")
	return path
}

// sentURI returns the request-URI a server receives for u, which the
// rules must match: its path and query as Go writes them (EscapedPath's
// form, or Opaque as is), the path after the host of an absolute-form
// Opaque ("//host/path").
func sentURI(u *url.URL) string {
	rest, ok := strings.CutPrefix(u.Opaque, "//")
	if !ok {
		return u.RequestURI()
	}
	_, path, _ := strings.Cut(rest, "/")
	uri := "/" + path
	if u.ForceQuery || u.RawQuery != "" {
		uri += "?" + u.RawQuery
	}
	return uri
}

// hostFor returns the Host header req must carry for the server to see
// the site whose robots.txt was read, the origin's canonical host[:port],
// and whether net/http would send another: a host it punycodes without
// the lookup profile's mapping ("ｈ.example" dials "h.example" but names
// "xn--" something), an address spelled otherwise, a default port. A
// canonically spelled URL needs nothing.
func (id originID) hostFor(req *http.Request) (string, bool) {
	sent := req.Host
	if sent == "" {
		sent = req.URL.Host
	}
	return id.host, sent != id.host
}

// robotsURL returns where the origin's robots.txt is fetched and the Host
// header to send: "" for the URL's own, or the site a Host override names,
// since a request whose Host overrides its URL's host is governed by that
// site's robots.txt, fetched from the address it is sent to.
func (id originID) robotsURL() (*url.URL, string) {
	u := &url.URL{Scheme: "http", Host: id.host, Path: "/robots.txt"}
	if id.https {
		u.Scheme = "https"
	}
	if id.addr == "" {
		return u, ""
	}
	u.Host = id.addr
	return u, id.host
}

// identify returns the id of the origin whose robots.txt governs a
// request for u sent to the site site ("" for u's own): a site other than
// u's origin is reached at u's address. A URL that spells its origin
// canonically (canonicalHost), as most do, gives it without building a
// string.
func identify(u *url.URL, site string) (originID, error) {
	// url.Parse gives the scheme in lower case; only a URL built by hand
	// needs the case-blind comparison.
	https := u.Scheme == "https" || u.Scheme != "http" && strings.EqualFold(u.Scheme, "https")
	id := originID{https: https, host: u.Host}
	if !canonicalHost(u) {
		var err error
		if id.host, err = canonicalOrigin(u); err != nil {
			return id, err
		}
	}
	if site == "" {
		return id, nil
	}
	if !validHost(site) {
		return id, fmt.Errorf("%w: %q", errBadHost, site)
	}
	named, err := canonicalOrigin(&url.URL{Scheme: u.Scheme, Host: site})
	if err != nil {
		return id, err
	}
	if named != id.host {
		id.host, id.addr = named, id.host
	}
	return id, nil
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

// canonicalOrigin returns the host[:port] of the origin whose robots.txt
// governs u: lower-cased, trailing dots folded ("site.example." is
// "site.example"), an internationalised host in its ASCII lookup form, an
// IP address in one spelling ("[0:0::1]" is "[::1]", "[::ffff:127.0.0.1]"
// is "127.0.0.1") and a default port dropped, so that every spelling of
// one origin shares one robots.txt and one pace.
func canonicalOrigin(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		// One spelling per address, as the socket sees it: RFC 5952's for
		// IPv6, and an IPv4-mapped address as the IPv4 one.
		if a = a.Unmap(); a.Is4() {
			host = a.String()
		} else {
			host = "[" + a.String() + "]"
		}
	} else if strings.Contains(host, ":") {
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
	return host, nil
}

// asciiHost returns host as DNS and the Host header see it: trailing dots
// folded (every one, so that the result reads back as itself),
// lower-cased, and a non-ASCII name in the ASCII form of the IDNA lookup
// profile (UTS #46, RFC 5891 section 5).
func asciiHost(host string) (string, error) {
	host = strings.TrimRight(host, ".")
	if host == "" {
		return "", errNoHost
	}
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("robots: host %q is not valid UTF-8", host)
	}
	ascii := true
	for i := 0; i < len(host) && ascii; i++ {
		ascii = host[i] < utf8.RuneSelf
	}
	if ascii {
		// Lower-casing is all the lookup profile does to an ASCII name,
		// and skipping it keeps names it would reject (an underscore)
		// reachable, as net/http keeps them.
		return strings.ToLower(host), nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("robots: host %q: %w", host, err)
	}
	return strings.TrimRight(a, "."), nil
}

// canonicalHost reports whether u already spells its origin as
// canonicalOrigin would: a lower-case http or https scheme, a host of
// lower-case ASCII letters, digits, '.' and '-' without a trailing dot,
// and no port or one without leading zeros that is not the scheme's
// default.
func canonicalHost(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	// Every request asks: one pass finds the port's colon and checks the
	// host's octets.
	h := u.Host
	host, port, hasPort := h, "", false
	for i := 0; i < len(h); i++ {
		if c := h[i]; !hostOctets[c] {
			if c != ':' {
				return false
			}
			host, port, hasPort = h[:i], h[i+1:], true
			break
		}
	}
	if host == "" || host[len(host)-1] == '.' {
		return false
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

// hostOctets are the octets of a host canonicalHost takes as it is.
var hostOctets = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-'
	}
	return t
}()
