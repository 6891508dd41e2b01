package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	pathtarget "github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// Transport is an http.RoundTripper that sends a request only when the
// robots.txt of its origin allows it, and no sooner than the origin's
// politeness delay. It wires the owners of the work: the origin table
// (origins.go), the target on the wire (target.go), bringing an origin's
// state up to date (refresh.go) from the store of records (store.go) and
// the fetcher (fetcher.go), the records' state machine (record.go),
// deciding (decide.go) and the pacer (pacer.go). The zero Transport works
// like NewTransport(nil, Options{}). It is safe for concurrent use.
type Transport struct {
	once sync.Once // runs setup, from NewTransport or on first use

	base    http.RoundTripper
	cfg     config
	fresh   freshness
	fetcher *fetcher
	store   *store
	flight  singleflight.Group
	origins originTable
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
	t.fresh = freshness{freshness: c.freshness, minFreshness: c.minFreshness, minBackoff: c.minBackoff, maxBackoff: c.maxBackoff}
	t.origins.init(c.maxOrigins, c.maxRobotsBytes)
	cache := opts.Cache
	if cache == nil {
		cache = NewMemoryCache(2*c.maxOrigins, DefaultCacheBytes)
	}
	t.store = newStore(cache, c.userAgent, c.logger)
	// Through t, so that the clock a test swaps in paces too.
	t.pacer.init(c.maxOrigins, cache, func() time.Time { return t.cfg.now() },
		func(ctx context.Context, d time.Duration) error { return t.cfg.sleep(ctx, d) }, c.logger, &t.stats.waited)
	t.fetcher = &fetcher{
		base: base, userAgent: c.userAgent, maxRedirects: c.maxRedirects, maxSize: c.maxSize,
		timeout: c.fetchTimeout, now: c.now, logger: c.logger,
	}
}

// RoundTrip sends req on the base RoundTripper if the robots.txt of its
// origin allows its request-URI, after the origin's politeness delay. A
// refused request is not sent: RoundTrip closes its body and returns a
// *DisallowedError, which matches ErrDisallowed. If req's context ends
// while it waits for the robots.txt or its slot, RoundTrip returns the
// context's error. Requests whose scheme is not http or https are passed
// to the base unchanged, and a request for /robots.txt itself is always
// allowed. RoundTrip never modifies req and never follows redirects.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	if req.URL != nil && !isHTTP(req.URL.Scheme) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	o, err := t.admit(ctx, req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	out := req
	if _, ok := req.Header["User-Agent"]; !ok && t.cfg.userAgent != "" {
		out = req.Clone(ctx)
		if out.Header == nil {
			out.Header = make(http.Header)
		}
		out.Header.Set("User-Agent", t.cfg.userAgent)
	}
	t.stats.sent.Add(1)
	resp, err := send(t.base, out)
	if err != nil {
		return nil, err
	}
	t.pacer.pause(ctx, o, resp, t.cfg.maxBackoff)
	return resp, nil
}

// admit takes req, whose scheme is http or https, through everything that
// comes before sending it: its target and origin, the decision on the
// origin's robots.txt, and the politeness wait. It returns the origin, or
// the error to return unsent: the caller then closes req's body.
func (t *Transport) admit(ctx context.Context, req *http.Request) (*origin, error) {
	if req.URL == nil {
		return nil, errors.New("robots: request has no URL")
	}
	var own [1]string
	tokens := t.tokensFor(req, own[:0])
	tg, err := targetOf(req)
	if err != nil {
		return nil, err
	}
	o, err := t.lookupTarget(&tg)
	if err != nil {
		return nil, err
	}
	now := t.cfg.now()
	var agent policy.Agent
	var st *state
	if !pathtarget.IsRobotsTxt(tg.uri) {
		if st, now, agent, err = t.verdict(ctx, o, req.URL, &tg, tokens, now); err != nil {
			return nil, err
		}
	} else {
		t.stats.robotsRequests.Add(1)
		if cur := o.current(); cur != nil {
			// robots.txt itself is always allowed, but paced like any
			// request.
			agent, _ = agentAt(cur, now, t.cfg.fallbackAfter, tokens)
		}
	}
	waited, err := t.pacer.wait(ctx, o, t.delayFor(agent), now)
	if err != nil {
		return nil, err
	}
	// Only a wait moves the clock far enough to matter; reading it again
	// costs a tenth of the fast path's time on some machines.
	if waited && st != nil && st.rec.due(t.cfg.now()) {
		// The wait outlasted the state decided on: decide again on a
		// fresh one, so that nothing goes out on a stale robots.txt.
		if _, _, _, err = t.verdict(ctx, o, req.URL, &tg, tokens, t.cfg.now()); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// tokensFor returns the product tokens req is decided for: the crawler's
// own, or, when Options names none, the product token of req's own
// User-Agent (as Scrapy does), appended to buf.
func (t *Transport) tokensFor(req *http.Request, buf []string) []string {
	if len(t.cfg.tokens) > 0 {
		return t.cfg.tokens
	}
	if tok := policy.ProductToken(req.Header.Get("User-Agent")); tok != "" {
		return append(buf, tok)
	}
	return nil
}

// closeBody closes the body of a request that will not be sent: a
// RoundTripper must close it on every path, errors included.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// Check decides rawURL as RoundTrip would, without waiting for its
// politeness slot or sending anything: nil when it is allowed, a
// *DisallowedError when robots.txt refuses it, or the context's error. It
// fetches the origin's robots.txt if it is not already held, so that a
// crawl frontier can schedule by it. Check returns nil for a URL whose
// scheme is not http or https, since RoundTrip passes those through, and
// an error for one without a scheme or without a host.
func (t *Transport) Check(ctx context.Context, rawURL string) error {
	t.init()
	u, err := parseAbsolute(rawURL)
	if err != nil || !isHTTP(u.Scheme) {
		return err
	}
	tg, err := targetFor(u, "")
	if err != nil {
		return err
	}
	o, err := t.lookupTarget(&tg)
	if err != nil {
		return err
	}
	if pathtarget.IsRobotsTxt(tg.uri) {
		return nil
	}
	_, _, _, err = t.verdict(ctx, o, u, &tg, t.cfg.tokens, t.cfg.now())
	return err
}

// parseAbsolute parses rawURL, which must have a scheme and, for http and
// https, a host: a relative reference names no origin to decide for.
func parseAbsolute(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("robots: invalid URL: %w", err)
	case u.Scheme == "":
		return nil, fmt.Errorf("robots: %q is not an absolute URL: it has no scheme", rawURL)
	case isHTTP(u.Scheme) && u.Host == "":
		return nil, fmt.Errorf("robots: %q has no host", u.Redacted())
	}
	return u, nil
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
	t.init()
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
