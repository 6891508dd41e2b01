package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/crawlkit/robots/policy"
)

// Transport is an http.RoundTripper that sends a request only when the
// robots.txt of its origin allows it, and no sooner than the origin's
// politeness delay. It wires the owners of the work: the origin table
// (origins.go), the store of records (store.go), the fetcher (fetcher.go)
// and the records' state machine (record.go). The zero Transport works
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
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("robots: request has no URL")
	}
	if !isHTTP(req.URL.Scheme) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	o, err := t.origins.lookup(req.URL)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	var own [1]string
	tokens := t.tokensFor(req, own[:0])
	now := t.cfg.now()
	var agent policy.Agent
	if uri := req.URL.RequestURI(); uri != "/robots.txt" {
		var st *state
		if st, now, err = t.state(ctx, o, now); err == nil {
			agent, err = t.decide(st, req.URL, uri, tokens, now)
		}
		if err != nil {
			closeBody(req)
			return nil, err
		}
	} else {
		t.stats.robotsRequests.Add(1)
		if st := o.current(); st != nil {
			// robots.txt itself is always allowed, but paced like any
			// request.
			agent, _ = agentAt(st, now, t.cfg.fallbackAfter, tokens)
		}
	}
	if err := t.wait(ctx, o, t.delayFor(agent), now); err != nil {
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
	t.pause(o, resp)
	return resp, nil
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
	o, err := t.origins.lookup(u)
	if err != nil {
		return err
	}
	uri := u.RequestURI()
	if uri == "/robots.txt" {
		return nil
	}
	st, now, err := t.state(ctx, o, t.cfg.now())
	if err != nil {
		return err
	}
	_, err = t.decide(st, u, uri, t.cfg.tokens, now)
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

// state returns o's robots state, fetching the robots.txt when it is not
// held or is due. Concurrent callers share one fetch. The fetch runs
// detached from ctx, under its own timeout, so a caller whose context ends
// returns at once with ctx.Err() while the fetch goes on for the others.
//
// now is the time of the caller's request; state returns it, or the time
// after the fetch when it had to wait for one.
func (t *Transport) state(ctx context.Context, o *origin, now time.Time) (*state, time.Time, error) {
	if st := o.current(); st != nil && !st.rec.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := t.flight.DoChan(o.key, func() (any, error) { return t.refresh(detached, o), nil })
	select {
	case r := <-ch:
		return r.Val.(*state), t.cfg.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// refresh brings o's state up to date: from the store when another
// transport sharing it has fetched, after another process's fetch when it
// holds the fleet's lease, or else by fetching the robots.txt itself.
func (t *Transport) refresh(ctx context.Context, o *origin) (st *state) {
	prev := o.current()
	defer func() {
		// The store, the fetcher and the logger recover their plug-ins'
		// panics; this catches the rest, which singleflight would
		// re-raise in a goroutine of its own, killing the process.
		if p := recover(); p != nil {
			safeLog(t.cfg.logger, slog.LevelError, "robots: panic refreshing robots.txt", "origin", o.key, "panic", p, "stack", string(debug.Stack()))
			res := fetchResult{outcome: Unreachable, maxAge: -1, err: fmt.Errorf("robots: panic: %v", p)}
			st = newState(next(recordOf(prev), res, t.cfg.now(), t.fresh), res.err, prev)
			o.st.Store(st)
		}
	}()
	now := t.cfg.now()
	if prev == nil || prev.rec.due(now) {
		if rec, ok := t.store.load(o.key); ok && (prev == nil || rec.FetchedAt.After(prev.rec.FetchedAt)) {
			prev = newState(rec, nil, prev)
		}
	}
	if prev != nil && !prev.rec.due(now) {
		t.origins.set(o, prev)
		return prev
	}
	leaseTTL := 2 * t.cfg.fetchTimeout
	held, fetch := t.store.lease(ctx, o.key, leaseTTL)
	if !fetch {
		deadline := now.Add(t.cfg.fetchTimeout)
		rec, h, ok := t.store.awaitOther(ctx, o.key, t.cfg.now, t.cfg.sleep, deadline, leaseTTL)
		if ok {
			st := newState(rec, nil, prev)
			t.origins.set(o, st)
			return st
		}
		held = h
	}
	if held {
		defer t.store.unlease(ctx, o.key)
		// The last holder may have saved and let go between our load and
		// our lease: its record saves a second fetch.
		if rec, ok := t.store.load(o.key); ok && !rec.due(t.cfg.now()) {
			st := newState(rec, nil, prev)
			t.origins.set(o, st)
			return st
		}
	}
	res := t.fetcher.fetch(ctx, o.robotsURL(), "", validatorsOf(prev))
	rec := next(recordOf(prev), res, t.cfg.now(), t.fresh)
	rec = t.store.save(ctx, o.key, rec)
	st = newState(rec, res.err, prev)
	t.origins.set(o, st)
	t.stats.fetched(res)
	t.logFetch(o.key, res, st)
	return st
}

// recordOf returns st's record, nil for no state.
func recordOf(st *state) *record {
	if st == nil {
		return nil
	}
	return &st.rec
}

// validatorsOf returns the validators to revalidate st's copy with: the
// parsed robots.txt's, or while unreachable its last good copy's.
func validatorsOf(st *state) validators {
	if st == nil {
		return validators{}
	}
	r := &st.rec
	if r.Outcome == Unreachable {
		r = r.Good
	}
	if r == nil || r.Outcome != Parsed {
		return validators{}
	}
	return validators{etag: r.ETag, lastModified: r.LastModified}
}

// agentAt returns what tokens are held to under st at now: the groups of
// the rules in force (none when every request is allowed), or refuse when
// every request is refused.
func agentAt(st *state, now time.Time, fallbackAfter time.Duration, tokens []string) (agent policy.Agent, refuse bool) {
	rules, refuse, _ := st.rules(now, fallbackAfter)
	return rules.Agent(tokens...), refuse
}

// decide returns the *DisallowedError refusing u, whose request-URI is
// uri, for tokens under st at now, or nil with the groups that allowed it.
// Both the request-URI as it will be sent and, when its path has dot
// segments, the resolved path must be allowed, since servers resolve them.
func (t *Transport) decide(st *state, u *url.URL, uri string, tokens []string, now time.Time) (policy.Agent, error) {
	agent, refuse := agentAt(st, now, t.cfg.fallbackAfter, tokens)
	if refuse {
		e := &DisallowedError{URL: u.Redacted(), Token: primaryToken(tokens), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
		return agent, t.refused(e)
	}
	if !agent.AllowedRequest(uri) {
		// Refused: only now is the explanation worth building.
		d := agent.DecideRequest(uri)
		token := d.Token
		if token == "" || token == "*" {
			token = primaryToken(tokens)
		}
		rule := d.Rule // a copy, so that d itself stays off the heap
		return agent, t.refused(&DisallowedError{URL: u.Redacted(), Token: token, Rule: &rule, Resolved: d.Resolved})
	}
	t.stats.allowed.Add(1)
	return agent, nil
}

// refused counts and logs a refusal and returns it.
func (t *Transport) refused(e *DisallowedError) error {
	t.stats.refused.Add(1)
	if e.Rule != nil {
		safeLog(t.cfg.logger, slog.LevelInfo, "robots: request refused", "url", e.URL, "token", e.Token, "rule", e.Rule.Directive(), "line", e.Rule.Line)
	} else {
		safeLog(t.cfg.logger, slog.LevelInfo, "robots: request refused", "url", e.URL, "token", e.Token, "reason", "robots.txt unreachable", "retryAt", e.RetryAt)
	}
	return e
}

// primaryToken is the most specific of tokens, or "*" without one.
func primaryToken(tokens []string) string {
	if len(tokens) > 0 {
		return tokens[0]
	}
	return "*"
}

// closeBody closes the body of a request that will not be sent: a
// RoundTripper must close it on every path, errors included.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
