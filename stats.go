package robots

import (
	"net/url"
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
	// every request and every redirect hop is one. Refused is the total
	// of the three kinds of refusal below.
	Allowed, Refused int64
	// RefusedByRule counts the refusals by a rule of robots.txt: the URL
	// is not to be crawled, so drop it.
	RefusedByRule int64
	// RefusedUnreachable counts the refusals because the origin's
	// robots.txt could not be fetched (a network error or a 5xx) and has
	// not been for Options.FallbackAfter: the URL may be allowed later,
	// so requeue it after the DisallowedError's RetryAt.
	RefusedUnreachable int64
	// RefusedByPreference counts the refusals by the site's AI usage
	// preferences for the purposes in Options.Purposes.
	RefusedByPreference int64
	// Sent counts the requests RoundTrip handed to the base RoundTripper:
	// those allowed, once their politeness wait was over, and requests
	// for /robots.txt itself. Requests that Check allowed are not sent and
	// not counted here.
	Sent int64
	// RobotsRequests counts the requests for /robots.txt itself that went
	// through RoundTrip (always allowed, and paced); the transport's own
	// robots.txt fetches are counted by Fetches instead.
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
	// StoreErrors counts the calls to a Fleet given as
	// Options.Cache that returned an error (the transport then used its
	// own state for the request), leaving out those cut short by the
	// request's own context. It stays 0 for a Cache that is no
	// Fleet.
	StoreErrors int64
}

// statusClasses are the keys of Stats.FetchStatus.
var statusClasses = [...]string{"2xx", "3xx", "4xx", "5xx", "network"}

// counters are the live counts behind Stats.
type counters struct {
	parsed, unavailable, unreachable atomic.Int64
	status                           [len(statusClasses)]atomic.Int64
	revalidated                      atomic.Int64
	allowed                          atomic.Int64
	byRule, unreachableRefused       atomic.Int64 // refusals by kind
	byPreference                     atomic.Int64
	sent, robotsRequests             atomic.Int64
	waited                           atomic.Int64 // nanoseconds
	waiting                          atomic.Int64
	storeErrors                      atomic.Int64
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
}

// snapshot returns the counts as Stats, with origins the number of
// origins held.
func (c *counters) snapshot(origins int) Stats {
	s := Stats{
		Fetches: map[Outcome]int64{
			Parsed:      c.parsed.Load(),
			Unavailable: c.unavailable.Load(),
			Unreachable: c.unreachable.Load(),
		},
		FetchStatus:    make(map[string]int64, len(statusClasses)),
		Revalidated:    c.revalidated.Load(),
		Allowed:        c.allowed.Load(),
		Sent:           c.sent.Load(),
		RobotsRequests: c.robotsRequests.Load(),
		Origins:        origins,
		Waited:         time.Duration(c.waited.Load()),
		Waiting:        int(c.waiting.Load()),
		StoreErrors:    c.storeErrors.Load(),

		RefusedByRule:       c.byRule.Load(),
		RefusedUnreachable:  c.unreachableRefused.Load(),
		RefusedByPreference: c.byPreference.Load(),
	}
	s.Refused = s.RefusedByRule + s.RefusedUnreachable + s.RefusedByPreference
	for i, k := range statusClasses {
		s.FetchStatus[k] = c.status[i].Load()
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
