package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/gregjones/httpcache"
	"golang.org/x/sync/singleflight"

	"github.com/crawlkit/robots/internal/target"
	"github.com/crawlkit/robots/policy"
)

// Defaults for the zero fields of Options.
const (
	// DefaultFetchTimeout bounds one robots.txt fetch, redirects and body
	// included.
	DefaultFetchTimeout = 30 * time.Second
	// DefaultMinDelay is the least time between two requests to one
	// origin.
	DefaultMinDelay = time.Second
	// DefaultMaxCrawlDelay caps how far a Crawl-delay line raises the
	// delay.
	DefaultMaxCrawlDelay = 30 * time.Second
	// DefaultFreshness is how long a fetched robots.txt is reused (RFC 9309
	// section 2.4).
	DefaultFreshness = 24 * time.Hour
	// DefaultFallbackAfter is how long an origin's robots.txt must stay
	// unreachable before its last good copy is used (RFC 9309 section
	// 2.3.1.4).
	DefaultFallbackAfter = 30 * 24 * time.Hour
	// DefaultMinBackoff is the wait before the first retry of an
	// unreachable robots.txt.
	DefaultMinBackoff = time.Minute
	// DefaultMaxBackoff is the longest wait between retries of an
	// unreachable robots.txt, and the longest pause a Retry-After can
	// impose.
	DefaultMaxBackoff = 4 * time.Hour
	// DefaultMaxRedirects is how many redirects a robots.txt fetch follows
	// (RFC 9309 section 2.3.1.2).
	DefaultMaxRedirects = 5
	// DefaultMaxOrigins is how many origins a transport keeps in memory.
	DefaultMaxOrigins = 10000
	// DefaultCacheBytes bounds the bytes of the store a transport makes
	// when Options.Cache is nil.
	DefaultCacheBytes = 128 << 20
)

// Options configures a Transport. The zero value works: it identifies the
// crawler only through the "*" groups and uses the defaults above.
type Options struct {
	// UserAgent is sent as the User-Agent of robots.txt fetches and of
	// requests that carry none. Its product token, as policy.ProductToken
	// reads it ("ExampleBot" in "ExampleBot/1.0
	// (+https://example.com/bot)"), selects the groups that apply, unless
	// Agents is set. If empty, no User-Agent is added and only the "*"
	// groups apply.
	UserAgent string
	// Agents are the product tokens the crawler answers to, most specific
	// first ("Googlebot-Image", "Googlebot"): the first that has a group in
	// a robots.txt selects it (RFC 9309 section 2.2.1). If empty, the
	// product token of UserAgent is used.
	Agents []string
	// Now is the clock that every freshness, back-off, fallback and
	// politeness time is read from, so that a test can move time forward.
	// If nil, time.Now is used.
	Now func() time.Time
	// Sleep waits for d or until ctx is done, returning ctx.Err() in the
	// latter case; politeness waits go through it. A test that sets Now
	// sets Sleep to advance its clock instead of sleeping. If nil, a real
	// timer is used.
	Sleep func(ctx context.Context, d time.Duration) error
	// FetchTimeout bounds one robots.txt fetch, redirects and body
	// included; a fetch that runs out is an unreachable robots.txt. If
	// zero or negative, DefaultFetchTimeout is used.
	FetchTimeout time.Duration
	// MinDelay is the least time between two requests to one origin. If
	// negative, requests are not spaced unless a Crawl-delay asks for it;
	// if zero, DefaultMinDelay is used.
	MinDelay time.Duration
	// MaxCrawlDelay caps how far the Crawl-delay of the crawler's groups
	// raises the delay between requests to an origin. If negative,
	// Crawl-delay is ignored; if zero, DefaultMaxCrawlDelay is used.
	MaxCrawlDelay time.Duration
	// Freshness is how long a fetched robots.txt, or a 4xx answer, is
	// reused before it is fetched again; a shorter Cache-Control max-age
	// is honoured. If zero or negative, DefaultFreshness (24 hours) is
	// used.
	Freshness time.Duration
	// FallbackAfter is how long an origin's robots.txt must stay
	// unreachable, refusing every request, before the last good copy is
	// used instead (or, with none, every request allowed). If zero or
	// negative, DefaultFallbackAfter (30 days) is used.
	FallbackAfter time.Duration
	// MinBackoff is the wait before the first retry of an unreachable
	// robots.txt; each further failure doubles it. If zero or negative,
	// DefaultMinBackoff is used.
	MinBackoff time.Duration
	// MaxBackoff caps the wait between retries of an unreachable
	// robots.txt and the pause that a Retry-After can impose on an
	// origin; it is never more than Freshness. If zero or negative,
	// DefaultMaxBackoff is used.
	MaxBackoff time.Duration
	// MaxRedirects is how many redirects a robots.txt fetch follows before
	// taking the robots.txt as unavailable. If negative, none is
	// followed; if zero, DefaultMaxRedirects is used.
	MaxRedirects int
	// MaxSize is how many bytes of a robots.txt are read; content past it
	// is ignored, cut back to the last complete line. RFC 9309 section 2.5
	// requires at least policy.MaxSize (500 KiB), so smaller values,
	// zero included, mean policy.MaxSize.
	MaxSize int
	// Cache is where fetched robots.txt responses and each origin's robots
	// state are kept; transports sharing one share their fetches. If nil,
	// a MemoryCache holding 2*MaxOrigins entries and DefaultCacheBytes
	// bytes is used.
	Cache httpcache.Cache
	// MaxOrigins is how many origins' parsed robots.txt and politeness
	// schedules are held in memory, the least recently used forgotten
	// first. If zero or negative, DefaultMaxOrigins is used.
	MaxOrigins int
	// Logger records each robots.txt fetch with its outcome and each
	// refused request with its reason. If nil, nothing is logged.
	Logger *slog.Logger
}

// Transport is an http.RoundTripper that sends a request only when the
// robots.txt of its origin allows it, and no sooner than the origin's
// politeness delay. It is safe for concurrent use.
type Transport struct {
	base    http.RoundTripper
	fetcher http.RoundTripper // httpcache over guardedTransport over base
	store   httpcache.Cache

	userAgent string
	tokens    []string
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
	logger    *slog.Logger

	fetchTimeout, minDelay, maxCrawlDelay time.Duration
	freshness, fallbackAfter              time.Duration
	minBackoff, maxBackoff                time.Duration
	maxRedirects, maxSize                 int

	flight  singleflight.Group
	origins originTable
	stats   counters
}

// NewTransport returns a Transport that sends allowed requests on base.
// If base is nil, http.DefaultTransport is used.
func NewTransport(base http.RoundTripper, opts Options) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{
		base:          base,
		store:         opts.Cache,
		userAgent:     opts.UserAgent,
		tokens:        opts.Agents,
		now:           opts.Now,
		sleep:         opts.Sleep,
		logger:        opts.Logger,
		fetchTimeout:  positiveOr(opts.FetchTimeout, DefaultFetchTimeout),
		minDelay:      max(orDefault(opts.MinDelay, DefaultMinDelay), 0),
		maxCrawlDelay: max(orDefault(opts.MaxCrawlDelay, DefaultMaxCrawlDelay), 0),
		freshness:     positiveOr(opts.Freshness, DefaultFreshness),
		fallbackAfter: positiveOr(opts.FallbackAfter, DefaultFallbackAfter),
		minBackoff:    positiveOr(opts.MinBackoff, DefaultMinBackoff),
		maxRedirects:  max(orDefault(opts.MaxRedirects, DefaultMaxRedirects), 0),
		maxSize:       max(opts.MaxSize, policy.MaxSize),
	}
	t.maxBackoff = min(positiveOr(opts.MaxBackoff, DefaultMaxBackoff), t.freshness)
	t.minBackoff = min(t.minBackoff, t.maxBackoff)
	maxOrigins := opts.MaxOrigins
	if maxOrigins <= 0 {
		maxOrigins = DefaultMaxOrigins
	}
	t.origins.init(maxOrigins)
	if len(t.tokens) == 0 {
		if tok := policy.ProductToken(opts.UserAgent); tok != "" {
			t.tokens = []string{tok}
		}
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.sleep == nil {
		t.sleep = sleep
	}
	if t.logger == nil {
		t.logger = slog.New(slog.DiscardHandler)
	}
	if t.store == nil {
		t.store = NewMemoryCache(2*maxOrigins, DefaultCacheBytes)
	}
	t.fetcher = &httpcache.Transport{
		Transport:           guardedTransport{base},
		Cache:               responseStore{t.store},
		MarkCachedResponses: true,
	}
	return t
}

// orDefault returns v, or def when v is zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// positiveOr returns v, or def when v is zero or negative.
func positiveOr(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
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
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("robots: request has no URL")
	}
	if !isHTTP(req.URL.Scheme) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	o, err := t.lookupOrigin(req.URL)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	now := t.now()
	var agent policy.Agent
	if uri := req.URL.RequestURI(); !target.IsRobotsTxt(uri) {
		var st *state
		if st, now, err = t.state(ctx, o, now); err == nil {
			agent, err = t.decide(st, req.URL, uri, now)
		}
		if err != nil {
			closeBody(req)
			return nil, err
		}
	} else if st := o.current(); st != nil {
		// robots.txt itself is always allowed, but paced like any request.
		agent, _ = t.agentAt(st, now)
	}
	if err := t.wait(ctx, o, t.delayFor(agent), now); err != nil {
		closeBody(req)
		return nil, err
	}
	out := req
	if _, ok := req.Header["User-Agent"]; !ok && t.userAgent != "" {
		out = req.Clone(ctx)
		if out.Header == nil {
			out.Header = make(http.Header)
		}
		out.Header.Set("User-Agent", t.userAgent)
	}
	resp, err := send(t.base, out)
	if err != nil {
		return nil, err
	}
	t.pause(o, resp)
	return resp, nil
}

// Check decides rawURL as RoundTrip would, without waiting for its
// politeness slot or sending anything: nil when it is allowed, a
// *DisallowedError when robots.txt refuses it, or the context's error. It
// fetches the origin's robots.txt if it is not already held, so that a
// crawl frontier can schedule by it. Check returns nil for a URL whose
// scheme is not http or https, since RoundTrip passes those through.
func (t *Transport) Check(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("robots: invalid URL: %w", err)
	}
	if !isHTTP(u.Scheme) {
		return nil
	}
	o, err := t.lookupOrigin(u)
	if err != nil {
		return err
	}
	uri := u.RequestURI()
	if target.IsRobotsTxt(uri) {
		return nil
	}
	st, now, err := t.state(ctx, o, t.now())
	if err != nil {
		return err
	}
	_, err = t.decide(st, u, uri, now)
	return err
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
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
	if st := o.current(); st != nil && !st.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := t.flight.DoChan(o.key, func() (any, error) { return t.refresh(detached, o), nil })
	select {
	case r := <-ch:
		return r.Val.(*state), t.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// refresh brings o's state up to date, from the store when another
// transport sharing it has fetched, or else by fetching the robots.txt.
func (t *Transport) refresh(ctx context.Context, o *origin) *state {
	prev := o.current()
	if prev == nil || prev.due(t.now()) {
		if stored := t.load(o.key); stored != nil && (prev == nil || stored.rec.FetchedAt.After(prev.rec.FetchedAt)) {
			prev = stored
		}
	}
	if prev != nil && !prev.due(t.now()) {
		o.set(prev)
		return prev
	}
	ctx, cancel := context.WithTimeout(ctx, t.fetchTimeout)
	defer cancel()
	res := t.fetch(ctx, o.key)
	st := t.next(prev, res, t.now())
	o.set(st)
	t.save(o.key, st)
	t.stats.fetched(res)
	t.logFetch(o.key, res, st)
	return st
}

// agentAt returns what the crawler is held to under st at now: the groups
// of the rules in force for its tokens (none when every request is
// allowed), or refuse when every request is refused.
func (t *Transport) agentAt(st *state, now time.Time) (agent policy.Agent, refuse bool) {
	rules, refuse, _ := st.rules(now, t.fallbackAfter)
	return rules.Agent(t.tokens...), refuse
}

// decide returns the *DisallowedError refusing u, whose request-URI is
// uri, under st at now, or nil with the groups that allowed it. Both the
// request-URI as it will be sent and, when its path has dot segments, the
// resolved path must be allowed, since servers resolve them.
func (t *Transport) decide(st *state, u *url.URL, uri string, now time.Time) (policy.Agent, error) {
	agent, refuse := t.agentAt(st, now)
	if refuse {
		e := &DisallowedError{URL: u.Redacted(), Token: t.primaryToken(), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
		return agent, t.refused(e)
	}
	if !agent.Allowed(uri) {
		// Refused: only now is the explanation worth building.
		d := agent.Decide(uri)
		token := d.Token
		if token == "" || token == "*" {
			token = t.primaryToken()
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
		t.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "rule", e.Rule.Directive(), "line", e.Rule.Line)
	} else {
		t.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "reason", "robots.txt unreachable", "retryAt", e.RetryAt)
	}
	return e
}

// primaryToken is the crawler's most specific token, or "*" without one.
func (t *Transport) primaryToken() string {
	if len(t.tokens) > 0 {
		return t.tokens[0]
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
