package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/crawlkit/robots/policy"
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

	base     http.RoundTripper
	answerer Answerer // base, when it is one
	cfg      config
	origins  robotsCache
	decider  decider
	pacer    pacer
	payer    payer
	stats    counters
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
	t.answerer, _ = base.(Answerer)
	cache := opts.Cache
	if cache == nil && opts.Fleet == nil {
		cache = NewMemoryCache(2*c.maxOrigins, DefaultCacheBytes)
	}
	fleet := counted(opts.Fleet, &t.stats, c.logger)
	// Through t, so that the clock or the sleep a test swaps in applies
	// to every owner.
	now := func() time.Time { return t.cfg.now() }
	sleep := func(ctx context.Context, d time.Duration) error { return t.cfg.sleep(ctx, d) }
	t.origins.init(&c, cache, fleet, base, now, sleep, &t.stats)
	t.decider = decider{tokens: c.tokens, purposes: c.purposes, fallbackAfter: c.fallbackAfter, logger: c.logger, stats: &t.stats}
	t.pacer.init(&c, newLocalPace(4*c.maxOrigins, now), fleet, now, sleep, &t.stats)
	t.origins.pausedUntil = func(ctx context.Context, o *origin, now time.Time) time.Time {
		return t.pacer.paused(ctx, t.pacer.lineOf(o.key, &o.line), now)
	}
	t.origins.fetcher.answerer = t.answerer
	t.origins.fetcher.pausedUntil = func(ctx context.Context, u *url.URL, now time.Time) time.Time {
		tg, err := targetFor(u, "")
		if err != nil {
			return time.Time{}
		}
		return t.pacer.pausedFor(ctx, tg.id.key(), now)
	}
	var ledger Ledger = newMemoryLedger()
	if fleet != nil {
		ledger = fleet
	}
	t.stats.currency = c.pay.MaxPrice.Currency
	t.payer.init(c.pay, ledger, &t.pacer, &t.stats, c.logger)
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
// ErrUnknownPurpose. A request whose host net/http would send spelled
// otherwise than its origin (an internationalised name the lookup profile
// maps, an IP address written another way, a default port) goes out with
// its origin's Host, the site whose robots.txt decided it. On every path
// the base is held to the RoundTripper contract: a response or an error,
// never both or neither. RoundTrip never modifies req and never follows
// redirects.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	ctx := req.Context()
	if req.Response != nil {
		// A redirect hop: the request before it was sent.
		ctx = unbounded(ctx)
	}
	// The request as it goes out, prepared before it waits so that the
	// wait is the last thing before sending.
	out := outbound(ctx, req, t.cfg.userAgent)
	// A site that charges, or that challenges the signature, is answered
	// once each: the request goes through again, decided and paced like
	// any.
	f := followUp{out: out}
	for {
		resp, again, err := t.roundTrip(ctx, req, out, &f)
		if err != nil || !again {
			// One request, one decision, as its last pass left it.
			if f.decided {
				t.decider.count(f.robotsTxt, f.verdict)
			}
			return resp, err
		}
		drain(resp)
		ctx = unbounded(ctx)
	}
}

// Answerer is implemented by a base RoundTripper that answers some
// responses with one more request of its own, as botauth.Transport
// answers a signature challenge (Accept-Signature). RoundTrip asks it of
// every response to a request it sent, and sends an answer once, decided
// and paced like any request; an error (the challenge cannot be
// answered) is RoundTrip's, the response then the error's. A robots.txt
// fetch is answered once too, and the answer's response is the fetch's;
// a challenge it cannot answer is the fetch's response as it came. A
// base that wraps an Answerer passes the method on.
type Answerer interface {
	// Answer returns the request to send in answer to resp, the response
	// to req, or nil for none.
	Answer(req *http.Request, resp *http.Response) (*http.Request, error)
}

// followUp is a request RoundTrip sends: out as it goes out, with the
// price paid offers; answered once the base answered a challenge.
type followUp struct {
	out       *http.Request
	robotsTxt bool // out is a request for /robots.txt itself
	// Whether admit decided it, on any pass, and the error of its last
	// decision: a request is counted once, as it last stood, however
	// often it went round (see decider.count).
	decided  bool
	verdict  error
	paid     offer
	answered bool
}

// roundTrip sends f's request once, admitted. prepared is req as it goes
// out at first. It returns the response and, when the site asked a price
// it pays or the base answers the response, true with f made the
// follow-up to send next.
func (t *Transport) roundTrip(ctx context.Context, req, prepared *http.Request, f *followUp) (*http.Response, bool, error) {
	o, out, tk, err := t.admit(ctx, req, f)
	if err == nil {
		// The slot counts from here: nothing comes between it and the
		// send. A store slot asked again may lie past the deadline too.
		err = t.pacer.handOn(ctx, tk)
	}
	if err != nil {
		if _, ok := errors.AsType[*SlotError](err); ok {
			t.stats.slotErrors.Add(1)
		}
		t.payer.release(ctx, &f.paid)
		// A RoundTripper closes the body on every path, errors included.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, false, err
	}
	if o == nil {
		resp, err := send(t.base, out)
		return resp, false, err
	}
	if f.robotsTxt {
		t.stats.robotsRequests.Add(1)
	} else {
		t.stats.sentPages.Add(1)
	}
	sent := out
	if f.paid.scheme != nil {
		sent = unrepeatable(out)
	}
	resp, err := send(t.base, sent)
	t.stats.responded(resp, err)
	if err != nil {
		// A paid request without an answer keeps its reservation: the
		// site may have charged it.
		return nil, false, err
	}
	l := t.pacer.lineOf(o.key, &o.line)
	t.pacer.pause(ctx, l, resp)
	switch pay, err := t.payer.answer(ctx, o, l, req, resp, &f.paid); {
	case err != nil:
		return nil, false, err
	case pay:
		f.out = prepared
		return resp, true, nil
	}
	if t.answerer == nil {
		return resp, false, nil
	}
	answer, err := t.answerer.Answer(out, resp)
	switch {
	case err != nil:
		return nil, false, err
	case answer != nil && f.answered:
		if answer.Body != nil {
			answer.Body.Close()
		}
		drain(resp)
		return nil, false, fmt.Errorf("robots: the base answered a response to its own answer (%s)", req.URL.Redacted())
	case answer != nil:
		*f = followUp{out: answer, answered: true, robotsTxt: f.robotsTxt, decided: f.decided, verdict: f.verdict}
		return resp, true, nil
	}
	return resp, false, nil
}

// admit takes req through everything that comes before sending it: its
// target, its origin, the decision on the origin's robots.txt, the
// request as it goes out (f.out, offering f.paid's price, with the Host
// of its origin: see originID.hostFor) and, last, the politeness wait,
// so that nothing comes between the slot and the send. It returns the
// origin and the request to send; no origin, and req itself, for a
// request whose scheme robots.txt does not govern, which goes to the
// base untouched; or the error to return unsent, the caller then closing
// req's body.
//
// For an origin that asked a price before, admit reserves the price a
// request offers up front, into f.paid, unless it holds one already, and
// refuses the request unsent when it cannot be paid.
func (t *Transport) admit(ctx context.Context, req *http.Request, f *followUp) (o *origin, out *http.Request, tk *ticket, err error) {
	if req.URL == nil {
		return nil, nil, nil, errors.New("robots: request has no URL")
	}
	if t.cfg.invalid != nil {
		return nil, nil, nil, t.cfg.invalid
	}
	if !isHTTP(req.URL.Scheme) {
		// robots.txt does not govern the request, but the base is held
		// to its contract all the same.
		return nil, req, nil, nil
	}
	tg, err := targetOf(req)
	if err != nil {
		return nil, nil, nil, err
	}
	// The Host the server is to see is told with the target, though
	// set on the request only once it is made.
	f.robotsTxt = tg.robotsTxt
	host, other := tg.id.hostFor(req)
	o = t.origins.originFor(tg.id)
	// decide decides the request on the origin's robots state as of now,
	// renewed first when it is due, and returns the delay it is paced by.
	// It decides once more only when the state it decided on is due by
	// then: the wait for the politeness slot may outlast it, and the head
	// of the line calls it again before it takes its slot, so that
	// nothing goes out on a stale robots.txt and nothing comes between
	// the slot and the send. now becomes the time after a renewal it
	// waited for. During a Retry-After's pause, this process's or one
	// another member stored (read only then, when the robots.txt is due),
	// a due robots.txt is not fetched, as no request to the origin goes
	// before the pause ends:
	// the request waits in line on the copy held, undecided, and the
	// head decides it on the robots.txt renewed once the pause is over.
	var st *state
	var agent policy.Agent
	decided, now := false, t.cfg.now()
	l := t.pacer.lineOf(o.key, &o.line)
	// A request that arrives while its origin's robots.txt is renewed
	// takes its place in the line now, so that the requests the renewal
	// held go in the order they came.
	var place *waiter
	if cur := o.current(); !tg.robotsTxt && (cur == nil || cur.rec.due(now)) {
		place = l.join()
		defer func() {
			if err != nil {
				l.leave(place)
			}
		}()
	}
	decide := func(at time.Time) (time.Duration, error) {
		if decided && (tg.robotsTxt || !st.rec.due(at)) {
			return t.pacer.delayFor(agent), nil
		}
		var err error
		now = at
		cur := o.current()
		if !decided && !tg.robotsTxt && cur != nil && cur.rec.due(at) && t.pacer.paused(ctx, l, at).After(at) {
			var own [1]string
			held, _ := cur.pacing(at, t.decider.fallbackAfter, t.decider.tokensFor(&tg, own[:0]))
			return t.pacer.delayFor(held), nil
		}
		if !tg.robotsTxt && cur == nil {
			if err := t.firstFetchPaused(ctx, o, l, at); err != nil {
				return 0, err
			}
		}
		if tg.robotsTxt {
			st = cur
		} else if st, now, err = t.origins.state(ctx, o, at); err != nil {
			return 0, err
		}
		decided, f.decided = true, true
		agent, err = t.decider.decide(st, &tg, now)
		f.verdict = err
		return t.pacer.delayFor(agent), err
	}
	delay, err := decide(now)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.paid.scheme == nil && !tg.robotsTxt && o.charges() {
		if err = t.payer.upFront(ctx, o, tg.url, &f.paid); err != nil {
			return nil, nil, nil, err
		}
	}
	if out, err = withOffer(req, f.out, &f.paid); err != nil {
		return nil, nil, nil, err
	}
	if other {
		if out == req {
			out = req.Clone(ctx)
		}
		out.Host = host
	}
	tk, err = t.pacer.wait(ctx, l, place, delay, now, decide)
	if err == nil && tk == nil && !decided {
		// Unpaced, it took no slot, and the pause ended before the head
		// could decide it: it is decided now.
		_, err = decide(t.cfg.now())
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return o, out, tk, nil
}

// Check decides rawURL as RoundTrip would, without waiting for its
// politeness slot or sending anything: nil when it is allowed, a
// *DisallowedError when robots.txt refuses it, or the context's error. It
// fetches the origin's robots.txt if it is not already held, so that a
// crawl frontier can schedule by it; never during a Retry-After pause,
// through which a copy held answers, due or not, and a first fetch
// waits. Robots and Preferences fetch alike. A URL that robots.txt does not
// govern, whose scheme is not http or https, gets an error matching
// ErrNotHTTP, as from Robots (RoundTrip passes such a request to the base
// unchecked); so does a URL without a scheme or without a host. An
// unknown purpose in Options.Purposes gets an error matching
// ErrUnknownPurpose.
func (t *Transport) Check(ctx context.Context, rawURL string) error {
	t.init()
	if t.cfg.invalid != nil {
		return t.cfg.invalid
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
	t.decider.count(tg.robotsTxt, err)
	return err
}

// NextFree returns the earliest time a request for rawURL could be sent,
// as of now: the later of its origin's next free politeness slot (the
// fleet's, from Options.Fleet, so that the slots other members took
// count; while the store is down, the process's own at the delay times
// the members it last saw), a slot for each request of the process
// already waiting for it (a delay apart, a store slot's spread added in
// a fleet, the delay times the members while the store is down), the end
// of a Retry-After pause and, while the origin's robots.txt is
// unreachable, the time it is fetched again (DisallowedError.RetryAt),
// or the end of the outage's Options.FallbackAfter if that comes first:
// as the record held says, or, when that is due or missing, the newest
// one stored, which another member of a fleet may have written, as the
// request itself will read it (unless the store is down).
// It reserves nothing, counts no fleet member and never waits for a
// slot, so that a crawl frontier can hand a worker
// only URLs whose origin is free, and hold the others. A request sent at
// the time it returns still takes its slot then: another goroutine or
// member may take that one first, and the request then waits for the
// next.
//
// NextFree decides nothing (Check does) and fetches nothing: the delay
// and the retry are those of the robots.txt held or, when that is due
// or missing, of the newest record stored (another member's Crawl-delay
// included); for an origin of which neither is known, the delay is
// Options.MinDelay, since the request will fetch its robots.txt first,
// and the answer is no earlier than the retry time of its last
// unreachable robots.txt (before the fallback), even once the origin was
// forgotten, nor than the end of the pause of another origin that its
// first robots.txt fetch, redirected there, waits out. A URL
// that robots.txt does not govern gets an error matching ErrNotHTTP, and
// an unknown purpose in Options.Purposes one matching ErrUnknownPurpose;
// a context that ends first, or during the store's answer, its error.
func (t *Transport) NextFree(ctx context.Context, rawURL string) (time.Time, error) {
	t.init()
	if t.cfg.invalid != nil {
		return time.Time{}, t.cfg.invalid
	}
	tg, err := urlTarget(rawURL)
	if err != nil {
		return time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	now := t.cfg.now()
	o := t.origins.originFor(tg.id)
	delay := t.pacer.minDelay
	var retry time.Time
	var refused bool
	// What the request will be decided and paced on: the store is read
	// unless it is known to be down, as for the slot.
	st := t.origins.newestState(ctx, o, now, !t.pacer.down.Load())
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	if st != nil {
		var own [1]string
		agent, _ := st.pacing(now, t.decider.fallbackAfter, t.decider.tokensFor(&tg, own[:0]))
		delay = t.pacer.delayFor(agent)
		if !tg.robotsTxt {
			retry, refused = st.refusedUntil(now, t.decider.fallbackAfter)
		}
	}
	if d := o.deferred.Load(); !refused && o.current() == nil && d != nil {
		// A first fetch waiting out a redirect's pause, which another
		// member may have made longer: nothing goes before it.
		retry = d.until
		if by, err := targetFor(d.by, ""); err == nil {
			retry = latest(retry, t.pacer.pauseEnd(ctx, by.id.key(), now))
		}
	}
	at, err := t.pacer.nextFree(ctx, t.pacer.lineOf(o.key, &o.line), delay, now)
	if err != nil {
		return time.Time{}, err
	}
	return latest(retry, at), nil
}

// firstFetchPaused returns the *SlotError of a request of ctx, made at
// at to o, of which no copy is held, when the first fetch of o's
// robots.txt would wait out a pause past the request's bound, as a slot
// past it does: o's own pause, or the one of the origin a redirect of
// that fetch leads to. A request without a bound asks nothing; one that
// a record stored (another member's, or the Cache's) decides without the
// fetch is decided as ever.
func (t *Transport) firstFetchPaused(ctx context.Context, o *origin, l *line, at time.Time) error {
	lim, _, _ := limit(ctx, at)
	if lim.IsZero() {
		return nil
	}
	until := t.pacer.paused(ctx, l, at)
	if d := o.deferred.Load(); d != nil {
		until = latest(until, d.until, t.origins.fetcher.pausedUntil(ctx, d.by, at))
	}
	if !until.After(lim) {
		return nil
	}
	if st := t.origins.newestState(ctx, o, at, true); st != nil && !st.rec.due(at) {
		return nil
	}
	return t.pacer.pastLimit(ctx, l, until, at)
}

// Robots returns the robots state of rawURL's origin, fetching its
// robots.txt through the same cache as RoundTrip when it is not already
// held, so that a crawler can read the sitemaps without a second request.
// The crawl delay is the one of the crawler's own tokens; without any
// (Options names none) it is the one of the "*" groups. A URL that
// robots.txt does not govern gets an error matching ErrNotHTTP, as from
// Check, and Options that cannot be kept the error Check returns for
// them, fetching nothing.
func (t *Transport) Robots(ctx context.Context, rawURL string) (RobotsInfo, error) {
	t.init()
	if t.cfg.invalid != nil {
		return RobotsInfo{}, t.cfg.invalid
	}
	tg, err := urlTarget(rawURL)
	if err != nil {
		return RobotsInfo{}, err
	}
	o, st, now, err := t.robotsState(ctx, &tg)
	if err != nil {
		return RobotsInfo{}, err
	}
	rules := st.rules(now, t.cfg.fallbackAfter)
	return robotsInfo(o, st, rules, t.pacer.delayFor(rules.robots.Agent(t.cfg.tokens...)), t.cfg.maxSize), nil
}

// Preferences returns the site's AI usage preferences for the content of
// rawURL, read from its robots.txt for the crawler's tokens as RoundTrip
// reads them, without waiting for a politeness slot or sending anything.
// It fetches the origin's robots.txt if it is not already held. While the
// robots.txt is unavailable or unreachable every preference is unknown:
// Check tells those apart. It returns an error for a URL that is not an
// absolute http or https URL (one matching ErrNotHTTP for another scheme,
// as Check does), one matching ErrUnknownPurpose as Check does, and the
// context's error. A URL's preferences are those of every form of it a
// server may serve, the most restrictive per label (see
// policy.Agent.Preferences).
func (t *Transport) Preferences(ctx context.Context, rawURL string) (policy.Preferences, error) {
	t.init()
	if t.cfg.invalid != nil {
		return policy.Preferences{}, t.cfg.invalid
	}
	tg, err := urlTarget(rawURL)
	if err != nil {
		return policy.Preferences{}, err
	}
	return t.robotsPreferences(ctx, &tg)
}

// ResponsePreferences returns the AI usage preferences for the content of
// resp, a response this transport returned: its Content-Usage header
// (draft-ietf-aipref-attach-05 section 2) combined with the robots.txt
// preferences for its request (see Preferences), the most restrictive
// per label winning, so that a crawler can tag what it stores. The
// robots.txt is read for the request's target as RoundTrip decided it,
// the request's Host and User-Agent included, and is normally held
// already. resp must carry its Request.
func (t *Transport) ResponsePreferences(ctx context.Context, resp *http.Response) (policy.Preferences, error) {
	t.init()
	if t.cfg.invalid != nil {
		return policy.Preferences{}, t.cfg.invalid
	}
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return policy.Preferences{}, errors.New("robots: response has no request URL")
	}
	header := policy.HeaderPreferences(resp.Header.Values("Content-Usage")...)
	if !isHTTP(resp.Request.URL.Scheme) {
		return header, nil
	}
	tg, err := targetOf(resp.Request)
	if err != nil {
		return policy.Preferences{}, err
	}
	site, err := t.robotsPreferences(ctx, &tg)
	if err != nil {
		return policy.Preferences{}, err
	}
	return site.Combine(header), nil
}

// Origin returns the origin of u as the transport keys it, in every
// count, in RobotsInfo.Origin and in a Fleet: scheme://host[:port],
// the scheme and host lower-cased, the host in its ASCII (IDNA) form
// without trailing dots, an IP address in one spelling (RFC 5952 for
// IPv6, an IPv4-mapped address as IPv4), and the scheme's default port
// left out. Every
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

// robotsState returns tg's origin and the origin's current robots state,
// renewed first if it is due, with the time it was read at.
func (t *Transport) robotsState(ctx context.Context, tg *wireTarget) (*origin, *state, time.Time, error) {
	o := t.origins.originFor(tg.id)
	st, now, err := t.origins.state(ctx, o, t.cfg.now())
	return o, st, now, err
}

// Stats returns a snapshot of the transport's counts. It reads every
// origin held for the ones paused and unreachable now, so it is for a
// scrape or a report, not for every request.
func (t *Transport) Stats() Stats {
	t.init()
	now := t.cfg.now()
	paused := t.pacer.lines.count(func(l *line) bool { return l.pausedAt().After(now) })
	return t.stats.snapshot(t.origins.len(), paused, t.origins.unreachable())
}

// AddHooks makes t tell h of each politeness wait and robots.txt fetch
// from now on, for metrics that keep each one (see Hooks), and returns
// the function that stops it. It is safe to call while requests run.
func (t *Transport) AddHooks(h Hooks) (remove func()) {
	t.init()
	return t.stats.addHooks(h)
}

// WebBotAuth returns what t does, as a Signature Agent Card declares it:
// its User-Agent and product token, the robots.txt lines it follows
// (Crawl-delay only when Options.MaxCrawlDelay lets it pace, the AI usage
// lines only when Options.Purposes are enforced), "crawler" as its
// trigger, its purposes, how a site slows it (Retry-After on 429 and 503,
// Crawl-delay), the most requests a second it sends to one origin (from
// Options.MinDelay; none when it is unpaced), and /robots.txt as the URL
// it requests everywhere. Set TargetedContent, or change Trigger, before
// serving it.
func (t *Transport) WebBotAuth() WebBotAuth {
	t.init()
	return webBotAuthOf(&t.cfg)
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
	t.init()
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
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
