package robots

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/robots/policy"
)

// Stats is a snapshot of what a Transport has done since it was made.
type Stats struct {
	// Fetches counts robots.txt fetches by outcome; a fetch answered 304
	// counts under the outcome of the copy it renewed.
	Fetches map[Outcome]int64
	// FetchStatus counts robots.txt fetches by the class of the status
	// they ended on, after redirects: "2xx", "3xx" (a 304 revalidation,
	// too many redirects, or one without a Location), "4xx", "5xx", and
	// "network" for a fetch
	// that got no answer (a network error, a timeout, a panic).
	FetchStatus map[string]int64
	// Revalidated counts the fetches answered 304 Not Modified to the
	// transport's own conditional GET, whose stored copy was renewed. A
	// server's X-From-Cache header is never taken as one.
	Revalidated int64
	// Allowed and Refused count the decisions of RoundTrip and Check:
	// every request and every redirect hop is one, except requests for
	// /robots.txt itself, which are never refused and are counted by
	// RobotsRequests. Refused is the total of the three kinds of refusal
	// below.
	Allowed, Refused int64
	// RefusedByRule counts the refusals by a rule of robots.txt: the URL
	// is not to be crawled, so drop it.
	RefusedByRule int64
	// RefusedUnreachable counts the refusals because the origin's
	// robots.txt could not be fetched (a network error, a 429, a 5xx, or
	// a proxy's 407) and has not been for Options.FallbackAfter: the URL
	// may be allowed later, so requeue it after the DisallowedError's
	// RetryAt.
	RefusedUnreachable int64
	// RefusedByPreference counts the refusals by the site's AI usage
	// preferences for the purposes in Options.Purposes.
	RefusedByPreference int64
	// Sent counts the requests RoundTrip handed to the base RoundTripper:
	// those allowed, once their politeness wait was over, and requests
	// for /robots.txt itself. Requests that Check allowed are not sent and
	// not counted here.
	Sent int64
	// RobotsRequests counts the requests for /robots.txt itself that
	// RoundTrip handed to the base (always allowed, and paced), counted
	// in Sent too, so that Sent-RobotsRequests, the pages sent, only
	// grows; the transport's own robots.txt fetches are counted by
	// Fetches instead.
	RobotsRequests int64
	// Origins is the number of origins held in memory.
	Origins int
	// Waited is the total time requests spent waiting for their
	// politeness slot.
	Waited time.Duration
	// Waiting is the number of requests waiting for their politeness
	// slot now: those asleep until it, not those still being decided or
	// asking a fleet store for it.
	Waiting int
	// StoreErrors counts the calls to the Options.Fleet that failed: the
	// store was asked and could not answer (the transport then used its
	// own state for the request). A call cut short by the request's own
	// context is the caller's and none of them, and so is one the store
	// skipped (ErrStoreSkipped), so that it equals the failures the store
	// counts itself (redisstore.Stats.Errors, pgstore.Stats.Errors).
	StoreErrors int64
	// StoreFallbacks counts the calls to the Options.Fleet answered from
	// the transport's own state: those that failed and those the store
	// skipped while it leaves a failed server alone. Each is a request
	// paced, or a robots.txt kept, by this process alone.
	StoreFallbacks int64
	// FleetMembers is how many members of the fleet, this one included,
	// the store counted pacing an origin at the last slot it granted
	// this process; 0 without a Fleet or before any slot.
	FleetMembers int

	// Responses counts the answers to the requests RoundTrip sent (Sent)
	// by the class of their status, "1xx" to "5xx", or "network" when the
	// base RoundTripper returned an error instead. A status that no class
	// holds counts in the nearest: past 599 as "5xx" (the server answered
	// wrongly), below 100 (which only a custom RoundTripper gives) as
	// "1xx".
	Responses map[string]int64
	// Pauses counts the Retry-After pauses responses started, by their
	// status: 429 (Too Many Requests) and 503 (Service Unavailable).
	Pauses map[int]int64
	// SlotErrors counts the requests that failed with a *SlotError:
	// their politeness slot lay past their deadline or WithMaxWait
	// bound, when first asked or when a store slot was asked again.
	SlotErrors int64
	// OriginsPaused is how many origins are held in a Retry-After pause
	// now; OriginsUnreachable how many of the origins held have a
	// robots.txt that is unreachable now (their requests refused, or on
	// the last good copy after Options.FallbackAfter).
	OriginsPaused, OriginsUnreachable int
	// Charged counts the responses that said what they charged
	// (crawler-charged; read only with an Options.Payment, since a
	// transport without one offers no price to charge), Spent sums it, in
	// Payment.MaxPrice's currency, and PriceRefused counts the requests not paid for (a
	// *PaymentError): over the limit or the budget, paid already, or
	// answered with a pay-per-crawl error. See Payment.
	Charged      int64
	Spent        Price
	PriceRefused int64
}

// statusClasses are the keys of Stats.FetchStatus; responseClasses those
// of Stats.Responses, where a final 1xx (101 Switching Protocols) can come.
var (
	statusClasses   = [...]string{"2xx", "3xx", "4xx", "5xx", "network"}
	responseClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "network"}
)

// pauseStatuses are the statuses whose Retry-After pauses an origin: the
// keys of Stats.Pauses.
var pauseStatuses = [...]int{http.StatusTooManyRequests, http.StatusServiceUnavailable}

// counters are the live counts behind Stats.
type counters struct {
	parsed, unavailable, unreachable atomic.Int64
	status                           [len(statusClasses)]atomic.Int64
	revalidated                      atomic.Int64
	allowed                          atomic.Int64
	byRule, unreachableRefused       atomic.Int64 // refusals by kind
	byPreference                     atomic.Int64
	sentPages, robotsRequests        atomic.Int64 // sent
	waited                           atomic.Int64 // nanoseconds
	waiting                          atomic.Int64
	storeErrors, storeFallbacks      atomic.Int64
	members                          atomic.Int64 // the store's last count; 0: none
	responses                        [len(responseClasses)]atomic.Int64
	pauses                           [len(pauseStatuses)]atomic.Int64
	slotErrors                       atomic.Int64
	charged, spent, priceRefused     atomic.Int64 // spent in millionths
	currency                         string       // Payment.MaxPrice's

	// hooks are told of each wait and fetch: copied on write, so that
	// telling them takes no lock.
	hooks   atomic.Pointer[[]*Hooks]
	hooksMu sync.Mutex // serialises the writers of hooks
}

// Hooks are told of a Transport's waits and robots.txt fetches as each
// ends, for what a snapshot cannot carry: a histogram of them, a trace.
// Each func may be nil. They are called on the goroutine of the request
// or renewal, so they must be quick, must not panic and must be safe for
// concurrent use. Give them to Transport.AddHooks.
type Hooks struct {
	// Waited is told how long a paced request spent waiting for its
	// politeness slot, from its decision to its slot or to leaving the
	// line. An unpaced request (no delay, no pause) does not wait and is
	// not told.
	Waited func(d time.Duration)
	// Fetched is told what a robots.txt fetch of the transport's own came
	// to and how long it took, redirects included; a fetch answered 304
	// is told under the outcome of the copy it renewed.
	Fetched func(outcome Outcome, d time.Duration)
}

// addHooks makes h told from now on and returns what stops it.
func (c *counters) addHooks(h Hooks) (remove func()) {
	hp := &h
	c.hooksMu.Lock()
	defer c.hooksMu.Unlock()
	var cur []*Hooks
	if p := c.hooks.Load(); p != nil {
		cur = *p
	}
	next := append(slices.Clip(cur), hp)
	c.hooks.Store(&next)
	return func() {
		c.hooksMu.Lock()
		defer c.hooksMu.Unlock()
		if p := c.hooks.Load(); p != nil {
			next := slices.DeleteFunc(slices.Clone(*p), func(x *Hooks) bool { return x == hp })
			c.hooks.Store(&next)
		}
	}
}

// waitedFor tells the hooks of a wait of d.
func (c *counters) waitedFor(d time.Duration) {
	if p := c.hooks.Load(); p != nil {
		for _, h := range *p {
			if h.Waited != nil {
				h.Waited(d)
			}
		}
	}
}

// responded counts the answer to a sent request: resp, or err.
func (c *counters) responded(resp *http.Response, err error) {
	i := len(responseClasses) - 1 // network
	if err == nil {
		i = min(max(resp.StatusCode/100, 1), 5) - 1
	}
	c.responses[i].Add(1)
}

// paused counts a pause a response with status started.
func (c *counters) paused(status int) {
	if i := slices.Index(pauseStatuses[:], status); i >= 0 {
		c.pauses[i].Add(1)
	}
}

// storeFailed counts the failed store call that returned err.
func (c *counters) storeFailed(err error) {
	c.storeFallbacks.Add(1)
	if !errors.Is(err, ErrStoreSkipped) {
		c.storeErrors.Add(1)
	}
}

// refused counts the refusal e under its kind.
func (c *counters) refused(e *DisallowedError) {
	switch {
	case e.Rule != nil:
		c.byRule.Add(1)
	case e.Preference != nil:
		c.byPreference.Add(1)
	default:
		c.unreachableRefused.Add(1)
	}
}

// fetched counts one robots.txt fetch.
func (c *counters) fetched(res fetchResult) {
	switch res.outcome {
	case Parsed:
		c.parsed.Add(1)
	case Unavailable:
		c.unavailable.Add(1)
	case Unreachable:
		c.unreachable.Add(1)
	}
	class := res.class()
	for i, k := range statusClasses {
		if k == class {
			c.status[i].Add(1)
		}
	}
	if res.notModified {
		c.revalidated.Add(1)
	}
	if p := c.hooks.Load(); p != nil {
		for _, h := range *p {
			if h.Fetched != nil {
				h.Fetched(res.outcome, res.took)
			}
		}
	}
}

// snapshot returns the counts as Stats, with origins the number of
// origins held and paused and unreachable those now so.
func (c *counters) snapshot(origins, paused, unreachable int) Stats {
	pages, robots := c.sentPages.Load(), c.robotsRequests.Load()
	s := Stats{
		Fetches: map[Outcome]int64{
			Parsed:      c.parsed.Load(),
			Unavailable: c.unavailable.Load(),
			Unreachable: c.unreachable.Load(),
		},
		FetchStatus:    make(map[string]int64, len(statusClasses)),
		Revalidated:    c.revalidated.Load(),
		Allowed:        c.allowed.Load(),
		Sent:           pages + robots,
		RobotsRequests: robots,
		Origins:        origins,
		Waited:         time.Duration(c.waited.Load()),
		Waiting:        int(c.waiting.Load()),
		StoreErrors:    c.storeErrors.Load(),
		StoreFallbacks: c.storeFallbacks.Load(),
		FleetMembers:   int(c.members.Load()),
		Responses:      make(map[string]int64, len(responseClasses)),
		Pauses:         make(map[int]int64, len(pauseStatuses)),
		SlotErrors:     c.slotErrors.Load(),
		Charged:        c.charged.Load(),
		Spent:          Price{Currency: c.currency, Micros: c.spent.Load()},
		PriceRefused:   c.priceRefused.Load(),

		OriginsPaused:      paused,
		OriginsUnreachable: unreachable,

		RefusedByRule:       c.byRule.Load(),
		RefusedUnreachable:  c.unreachableRefused.Load(),
		RefusedByPreference: c.byPreference.Load(),
	}
	s.Refused = s.RefusedByRule + s.RefusedUnreachable + s.RefusedByPreference
	for i, k := range statusClasses {
		s.FetchStatus[k] = c.status[i].Load()
	}
	for i, k := range responseClasses {
		s.Responses[k] = c.responses[i].Load()
	}
	for i, k := range pauseStatuses {
		s.Pauses[k] = c.pauses[i].Load()
	}
	return s
}

// RobotsInfo is the robots state of one origin as a transport holds it.
type RobotsInfo struct {
	// Origin is scheme://host[:port], the host lower-cased and in ASCII
	// form and a default port left out.
	Origin string
	// Outcome is what the last robots.txt fetch came to.
	Outcome Outcome
	// StatusCode is the HTTP status of the last fetch after redirects, 0
	// when no answer arrived.
	StatusCode int
	// Policy is the parsed robots.txt in force, with its sitemaps and
	// crawl-delays. It is nil when every request is allowed (unavailable)
	// or refused (unreachable).
	Policy *policy.Robots
	// FetchedAt is when the last fetch finished; Expires, for a parsed or
	// unavailable robots.txt, when it goes stale and is fetched again.
	FetchedAt, Expires time.Time
	// RetryAt is, when unreachable, when the robots.txt is fetched again.
	RetryAt time.Time
	// UnreachableSince is, when unreachable, when the current run of
	// failed fetches began.
	UnreachableSince time.Time
	// Fallback reports whether the origin has been unreachable for
	// Options.FallbackAfter, so that the last good copy (Policy, or every
	// request allowed when that copy was unavailable or there is none) is
	// in force instead of refusing everything.
	Fallback bool
	// Err is, when unreachable, the network or server error of the last
	// fetch.
	Err error
	// Size is how many bytes of robots.txt the last good fetch kept,
	// decoded, never more than Options.MaxSize; Truncated reports whether
	// content past Options.MaxSize was ignored.
	Size      int64
	Truncated bool
	// Body is the text of the last good robots.txt as it was parsed:
	// decoded and cut to Options.MaxSize at a line end. It is nil when the
	// last good fetch was not parsed, and shared: it must not be modified.
	Body []byte
	// Sitemaps are the Sitemap lines of Policy as absolute http or https
	// URLs, relative ones resolved against the URL the robots.txt was
	// finally read from, after redirects; lines that do not resolve to
	// one are left out.
	Sitemaps []string
	// Delay is the least time between two requests to the origin: the
	// transport's minimum raised by the crawler's Crawl-delay.
	Delay time.Duration
}

// robotsInfo returns what RobotsInfo reports of o under its state st,
// with rules the rules in force, delay the least time between two of its
// requests and maxSize the transport's size limit.
func robotsInfo(o *origin, st *state, rules inForce, delay time.Duration, maxSize int) RobotsInfo {
	info := RobotsInfo{
		Origin:     string(o.key),
		Outcome:    st.rec.Outcome,
		StatusCode: st.rec.Status,
		Policy:     rules.robots,
		FetchedAt:  st.rec.FetchedAt,
		Fallback:   rules.fallback,
		Delay:      delay,
	}
	good := st.rec
	if st.rec.Outcome == Unreachable {
		info.RetryAt, info.UnreachableSince, info.Err = st.rec.RetryAt, st.rec.Since, st.err
		good = record{}
		if st.rec.Good != nil {
			good = *st.rec.Good
		}
	} else {
		info.Expires = st.rec.Expires
	}
	info.Size, info.Truncated = min(good.Size, int64(maxSize)), good.Truncated
	if good.Outcome == Parsed {
		info.Body = good.Body
	}
	// Relative lines resolve against where the file was finally read
	// from, after redirects (RFC 3986 section 5.1.3).
	base := o.robotsURL
	if read, err := url.Parse(good.URL); err == nil && good.URL != "" {
		base = read
	}
	info.Sitemaps = sitemaps(rules.robots, base)
	return info
}

// sitemaps returns the Sitemap lines of r resolved against robotsURL,
// keeping only those that come to an http or https URL with a host.
func sitemaps(r *policy.Robots, robotsURL *url.URL) []string {
	if r == nil || robotsURL == nil || len(r.Sitemaps()) == 0 {
		return nil
	}
	out := make([]string, 0, len(r.Sitemaps()))
	for _, s := range r.Sitemaps() {
		u, err := robotsURL.Parse(s)
		if err != nil || !isHTTP(u.Scheme) || u.Host == "" {
			continue
		}
		out = append(out, u.String())
	}
	return out
}
