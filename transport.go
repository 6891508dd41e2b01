package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/crawlkit/robots/internal/target"
)

// Transport is an http.RoundTripper that sends a request only when the
// robots.txt of its origin allows it, and no sooner than the origin's
// politeness delay. For each request it finds the site whose robots.txt
// applies and the request-URI the server will see, has the robots cache
// give that origin's robots state (fetched once per origin, shared by all
// goroutines), decides every form of the request-URI a server may serve,
// waits for the origin's politeness slot and sends. The zero Transport
// works like NewTransport(nil, Options{}). It is safe for concurrent use.
type Transport struct {
	once sync.Once // runs setup, from NewTransport or on first use

	base    http.RoundTripper
	cfg     config
	origins robotsCache
	decider decider
	pacer   pacer
	stats   counters
}

// NewTransport returns a Transport that sends allowed requests on base.
// If base is nil, http.DefaultTransport is used.
func NewTransport(base http.RoundTripper, opts Options) *Transport {
	t := &Transport{}
	t.once.Do(func() { t.setup(base, opts) })
	return t
}

// init sets up a zero Transport with the default options.
func (t *Transport) init() {
	t.once.Do(func() { t.setup(nil, Options{}) })
}

func (t *Transport) setup(base http.RoundTripper, opts Options) {
	if base == nil {
		base = http.DefaultTransport
	}
	c := newConfig(opts)
	t.base, t.cfg = base, c
	cache := opts.Cache
	if cache == nil && opts.Fleet == nil {
		cache = NewMemoryCache(2*c.maxOrigins, DefaultCacheBytes)
	}
	fleet := counted(opts.Fleet, &t.stats.storeErrors)
	// Through t, so that the clock or the sleep a test swaps in applies
	// to every owner.
	now := func() time.Time { return t.cfg.now() }
	sleep := func(ctx context.Context, d time.Duration) error { return t.cfg.sleep(ctx, d) }
	t.origins.init(&c, cache, fleet, base, now, sleep, &t.stats)
	t.decider = decider{tokens: c.tokens, purposes: c.purposes, fallbackAfter: c.fallbackAfter, logger: c.logger, stats: &t.stats}
	t.pacer.init(&c, fleet, now, sleep, &t.stats.waited, &t.stats.waiting)
}

// RoundTrip sends req on the base RoundTripper if the robots.txt of its
// origin allows its request-URI, after the origin's politeness delay. A
// refused request is not sent: RoundTrip closes its body and returns a
// *DisallowedError, which matches ErrDisallowed. If req's context ends
// while it waits for the robots.txt or its slot, RoundTrip returns the
// context's error. Requests whose scheme is not http or https are passed
// to the base unchanged, and a request for /robots.txt itself is always
// allowed. A transport whose Options.Purposes names an unknown purpose
// sends nothing: every request fails with an error matching
// ErrUnknownPurpose. On every path the base is held to the RoundTripper contract:
// a response or an error, never both or neither. RoundTrip never modifies
// req and never follows redirects.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	ctx := req.Context()
	// The request as it goes out, prepared before it waits so that the
	// wait is the last thing before sending.
	out := outbound(ctx, req, t.cfg.userAgent)
	o, tk, err := t.admit(ctx, req)
	if err != nil {
		// A RoundTripper closes the body on every path, errors included.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	// Without an origin the scheme is not http or https: robots.txt does
	// not govern the request, but the base is held to its contract all
	// the same.
	if o == nil {
		out = req
	} else {
		t.stats.sent.Add(1)
	}
	// The slot counts from here: nothing comes between it and the send.
	t.pacer.handOn(tk)
	resp, err := send(t.base, out)
	if err != nil {
		return nil, err
	}
	if o != nil {
		t.pacer.pause(ctx, o, resp)
	}
	return resp, nil
}

// admit takes req through everything that comes before sending it: its
// target, its origin, the decision on the origin's robots.txt and the
// politeness wait. It returns the origin; no origin and no error for a
// request whose scheme robots.txt does not govern, which goes to the base
// untouched; or the error to return unsent, the caller then closing
// req's body.
func (t *Transport) admit(ctx context.Context, req *http.Request) (*origin, ticket, error) {
	if req.URL == nil {
		return nil, ticket{}, errors.New("robots: request has no URL")
	}
	if t.cfg.purposesErr != nil {
		return nil, ticket{}, t.cfg.purposesErr
	}
	if !isHTTP(req.URL.Scheme) {
		return nil, ticket{}, nil
	}
	tg, err := targetOf(req)
	if err != nil {
		return nil, ticket{}, err
	}
	o := t.origins.originFor(tg.id)
	now := t.cfg.now()
	var st *state
	if tg.robotsTxt {
		st = o.current()
	} else if st, now, err = t.origins.state(ctx, o, now); err != nil {
		return nil, ticket{}, err
	}
	agent, err := t.decider.decide(st, &tg, now)
	if err != nil {
		return nil, ticket{}, err
	}
	// The wait for the politeness slot may outlast the robots state
	// decided on: the request is then decided once more, on a fresh
	// state, before it takes its slot, so that nothing goes out on a
	// stale robots.txt and nothing comes between the slot and the send.
	recheck := func(now time.Time) (time.Duration, error) {
		if !tg.robotsTxt && st.rec.due(now) {
			if st, now, err = t.origins.state(ctx, o, now); err != nil {
				return 0, err
			}
			if agent, err = t.decider.decide(st, &tg, now); err != nil {
				return 0, err
			}
		}
		return t.pacer.delayFor(agent), nil
	}
	tk, err := t.pacer.wait(ctx, o, t.pacer.delayFor(agent), now, recheck)
	if err != nil {
		return nil, ticket{}, err
	}
	return o, tk, nil
}

// Check decides rawURL as RoundTrip would, without waiting for its
// politeness slot or sending anything: nil when it is allowed, a
// *DisallowedError when robots.txt refuses it, or the context's error. It
// fetches the origin's robots.txt if it is not already held, so that a
// crawl frontier can schedule by it. A URL that robots.txt does not
// govern, whose scheme is not http or https, gets an error matching
// ErrNotHTTP, as from Robots (RoundTrip passes such a request to the base
// unchecked); so does a URL without a scheme or without a host. An
// unknown purpose in Options.Purposes gets an error matching
// ErrUnknownPurpose.
func (t *Transport) Check(ctx context.Context, rawURL string) error {
	t.init()
	if t.cfg.purposesErr != nil {
		return t.cfg.purposesErr
	}
	tg, err := urlTarget(rawURL)
	if err != nil || tg.robotsTxt {
		return err
	}
	_, st, now, err := t.robotsState(ctx, &tg)
	if err != nil {
		return err
	}
	_, err = t.decider.decide(st, &tg, now)
	return err
}

// NextFree returns the earliest time a request for rawURL could be sent,
// as of now: the later of its origin's next free politeness slot (the
// fleet's, from Options.Fleet, so that the slots other members took
// count; while the store is down, the process's own at the delay times
// the members it last saw), a delay for each request of the process
// already waiting for it, the end of a Retry-After pause and, while the
// origin's robots.txt is unreachable, the time it is fetched again
// (DisallowedError.RetryAt). It reserves nothing, counts no fleet member
// and never waits for a slot, so that a crawl frontier can hand a worker
// only URLs whose origin is free, and hold the others. A request sent at
// the time it returns still takes its slot then: another goroutine or
// member may take that one first, and the request then waits for the
// next.
//
// NextFree decides nothing (Check does) and fetches nothing: for an
// origin whose robots.txt is not held, the delay is Options.MinDelay,
// since the request will fetch it first. A URL that robots.txt does not
// govern gets an error matching ErrNotHTTP, and an unknown purpose in
// Options.Purposes one matching ErrUnknownPurpose.
func (t *Transport) NextFree(ctx context.Context, rawURL string) (time.Time, error) {
	t.init()
	if t.cfg.purposesErr != nil {
		return time.Time{}, t.cfg.purposesErr
	}
	tg, err := urlTarget(rawURL)
	if err != nil {
		return time.Time{}, err
	}
	now := t.cfg.now()
	o := t.origins.originFor(tg.id)
	delay := t.pacer.minDelay
	var retry time.Time
	if st := o.current(); st != nil {
		var own [1]string
		agent, refused := st.agent(now, t.decider.fallbackAfter, t.decider.tokensFor(&tg, own[:0]))
		if refused && !tg.robotsTxt && st.rec.RetryAt.After(now) {
			retry = st.rec.RetryAt
		}
		delay = t.pacer.delayFor(agent)
	}
	return latest(retry, t.pacer.nextFree(ctx, o, delay, now)), nil
}

// Origin returns the origin of u as the transport keys it, in every
// count, in RobotsInfo.Origin and in a Fleet: scheme://host[:port],
// the scheme and host lower-cased, the host in its ASCII (IDNA) form
// without a trailing dot, and the scheme's default port left out. Every
// URL that shares a robots.txt and a politeness slot with u gives the
// same origin, so that a crawl frontier can group URLs by it. A URL that
// robots.txt does not govern gets an error matching ErrNotHTTP, as from
// Check.
func (t *Transport) Origin(u *url.URL) (string, error) {
	if err := checkHTTP(u); err != nil {
		return "", err
	}
	tg, err := targetFor(u, "")
	if err != nil {
		return "", err
	}
	return string(tg.id.key()), nil
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

// robotsState returns tg's origin and the origin's current robots state,
// renewed first if it is due, with the time it was read at.
func (t *Transport) robotsState(ctx context.Context, tg *wireTarget) (*origin, *state, time.Time, error) {
	o := t.origins.originFor(tg.id)
	st, now, err := t.origins.state(ctx, o, t.cfg.now())
	return o, st, now, err
}

// ErrNotHTTP is what Check and Robots return, wrapped, for a URL that is
// not an absolute http or https URL with a host: no robots.txt governs it.
var ErrNotHTTP = errors.New("robots: not an http or https URL")

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

// Stats returns a snapshot of the transport's counts.
func (t *Transport) Stats() Stats {
	t.init()
	return t.stats.snapshot(t.origins.len())
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
	t.init()
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

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

// isHTTP reports whether scheme is one that robots.txt governs.
func isHTTP(scheme string) bool {
	return scheme == "http" || scheme == "https" ||
		strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// errBadHost is the error for a Host override that net/http would rewrite
// or a server could read as another site.
var errBadHost = errors.New("robots: request Host is not an ASCII host[:port]")

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
	tg.robotsTxt = target.IsRobotsTxt(tg.uri)
	if site == "" && host != "" && host != u.Host {
		site = host
	}
	var err error
	tg.id, err = identify(u, site)
	return tg, err
}

// errNoHost is returned for an http or https URL without a host.
var errNoHost = errors.New("robots: URL has no host")

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
// governs u: lower-cased, a trailing dot folded ("site.example." is
// "site.example"), an internationalised host in its ASCII lookup form and
// a default port dropped, so that every spelling of one origin shares one
// robots.txt.
func canonicalOrigin(u *url.URL) (string, error) {
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
	return host, nil
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
	return strings.TrimSuffix(a, "."), nil
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

// outbound returns req as it is to be sent: req itself, or, when it
// carries no User-Agent and the crawler has one, a clone carrying it, so
// that the caller's request is never modified.
func outbound(ctx context.Context, req *http.Request, userAgent string) *http.Request {
	if _, ok := req.Header["User-Agent"]; ok || userAgent == "" {
		return req
	}
	out := req.Clone(ctx)
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	out.Header.Set("User-Agent", userAgent)
	return out
}
