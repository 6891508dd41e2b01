package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Transport is an http.RoundTripper that sends a request only when the
// robots.txt of its origin allows it, and no sooner than the origin's
// politeness delay. It wires the owners of the work, in the order a
// request meets them: its target on the wire (target.go), its origin and
// the origin's robots state in the origin table (origins.go), which has
// the refresher renew a due state (refresh.go, from the store in
// store.go, the fetcher in fetcher.go and the records' state machine in
// record.go), the decision (decide.go), the politeness wait (pacer.go)
// and the send (send.go). The zero Transport works like
// NewTransport(nil, Options{}). It is safe for concurrent use.
type Transport struct {
	once sync.Once // runs setup, from NewTransport or on first use

	base    http.RoundTripper
	cfg     config
	origins originTable
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
	if cache == nil {
		cache = NewMemoryCache(2*c.maxOrigins, DefaultCacheBytes)
	}
	// Through t, so that the clock or the sleep a test swaps in applies
	// to every owner.
	now := func() time.Time { return t.cfg.now() }
	sleep := func(ctx context.Context, d time.Duration) error { return t.cfg.sleep(ctx, d) }
	refresher := newRefresher(&c, cache, base, now, sleep, &t.stats)
	t.origins.init(c.maxOrigins, c.maxRobotsBytes, refresher, now)
	t.decider = decider{tokens: c.tokens, purposes: c.purposes, fallbackAfter: c.fallbackAfter, logger: c.logger, stats: &t.stats}
	t.pacer.init(&c, cache, now, sleep, &t.stats.waited)
}

// RoundTrip sends req on the base RoundTripper if the robots.txt of its
// origin allows its request-URI, after the origin's politeness delay. A
// refused request is not sent: RoundTrip closes its body and returns a
// *DisallowedError, which matches ErrDisallowed. If req's context ends
// while it waits for the robots.txt or its slot, RoundTrip returns the
// context's error. Requests whose scheme is not http or https are passed
// to the base unchanged, and a request for /robots.txt itself is always
// allowed. On every path the base is held to the RoundTripper contract:
// a response or an error, never both or neither. RoundTrip never modifies
// req and never follows redirects.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	ctx := req.Context()
	o, err := t.admit(ctx, req)
	switch {
	case err != nil:
		// A RoundTripper closes the body on every path, errors included.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	case o == nil:
		// Not http or https: robots.txt does not govern it, but the base
		// is held to its contract all the same.
		return send(t.base, req)
	}
	t.stats.sent.Add(1)
	resp, err := send(t.base, outbound(ctx, req, t.cfg.userAgent))
	if err != nil {
		return nil, err
	}
	t.pacer.pause(ctx, o, resp)
	return resp, nil
}

// admit takes req through everything that comes before sending it: its
// target, its origin, the decision on the origin's robots.txt and the
// politeness wait. It returns the origin; no origin and no error for a
// request whose scheme robots.txt does not govern, which goes to the base
// untouched; or the error to return unsent, the caller then closing
// req's body.
func (t *Transport) admit(ctx context.Context, req *http.Request) (*origin, error) {
	if req.URL == nil {
		return nil, errors.New("robots: request has no URL")
	}
	if !isHTTP(req.URL.Scheme) {
		return nil, nil
	}
	tg, err := targetOf(req)
	if err != nil {
		return nil, err
	}
	o := t.origins.lookupTarget(&tg)
	// The wait for the politeness slot may outlast the robots state
	// decided on: the request is then decided once more, on a fresh state,
	// and sent without waiting again, so that nothing goes out on a stale
	// robots.txt.
	now := t.cfg.now()
	for waited := false; ; {
		var st *state
		if tg.robotsTxt {
			st = o.current()
		} else if st, now, err = t.origins.state(ctx, o, now); err != nil {
			return nil, err
		}
		agent, err := t.decider.decide(st, &tg, now)
		if err != nil {
			return nil, err
		}
		if waited {
			return o, nil
		}
		if waited, err = t.pacer.wait(ctx, o, t.pacer.delayFor(agent), now); err != nil {
			return nil, err
		}
		// Only a wait moves the clock far enough to matter; reading it
		// again costs a tenth of the fast path's time on some machines.
		if !waited || tg.robotsTxt {
			return o, nil
		}
		if now = t.cfg.now(); !st.rec.due(now) {
			return o, nil
		}
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
	if err != nil || tg.robotsTxt {
		return err
	}
	o := t.origins.lookupTarget(&tg)
	st, now, err := t.origins.state(ctx, o, t.cfg.now())
	if err != nil {
		return err
	}
	_, err = t.decider.decide(st, &tg, now)
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
