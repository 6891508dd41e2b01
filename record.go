package robots

import (
	"bytes"
	"errors"
	"time"

	"github.com/crawlkit/robots/policy"
)

// record is one origin's robots state as it is stored: what the last fetch
// came to, the validators to revalidate it with, and, while unreachable,
// the outage clock and the last good copy. It and the functions over it
// (recordAfter, due, merge, state.rules) are the pure state machine: they
// take the time and the settings as arguments and change nothing but
// their result.
type record struct {
	Outcome   Outcome   `json:"outcome"`
	Status    int       `json:"status,omitempty"`
	Size      int64     `json:"size,omitempty"` // decoded bytes kept, at most the size limit
	Truncated bool      `json:"truncated,omitempty"`
	FetchedAt time.Time `json:"fetchedAt"`
	Expires   time.Time `json:"expires,omitzero"` // good outcomes: when stale
	// URL is where a parsed robots.txt was finally read from, after
	// redirects: what its relative Sitemap lines resolve against.
	URL string `json:"url,omitempty"`
	// Validators of a parsed body, sent back in a conditional GET.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	// Vary reports that the response varied by User-Agent, so the record
	// is kept per user agent.
	Vary bool `json:"vary,omitempty"`
	// Unreachable outcomes: the first failure of the current run, when to
	// fetch again, how many fetches failed in a row, the last error and
	// the last good copy.
	Since    time.Time `json:"since,omitzero"`
	RetryAt  time.Time `json:"retryAt,omitzero"`
	Failures int       `json:"failures,omitempty"`
	Err      string    `json:"err,omitempty"`
	Good     *record   `json:"good,omitempty"`
	// BodyLen is len(Body) in the stored form, whose header is JSON and
	// whose bodies follow it raw.
	BodyLen int    `json:"bodyLen,omitempty"`
	Body    []byte `json:"-"` // when Parsed: the file as parsed, cut to the size limit
}

// cut cuts r's bodies, its own and its last good copy's, to at most limit
// bytes as the fetcher reads a file, so that a record stored by a member
// with a larger MaxSize, or by a store gone wrong, is read as this
// transport would have read the file: nothing past its MaxSize is parsed.
// Once one is cut, both are copies, so that the bytes read, which the
// bodies point into, are not kept whole.
func (r *record) cut(limit int) {
	if len(r.Body) <= limit && (r.Good == nil || len(r.Good.Body) <= limit) {
		return
	}
	r.trim(limit)
	if r.Good != nil {
		good := *r.Good
		good.trim(limit)
		r.Good = &good
	}
}

// trim cuts r's own body to at most limit bytes, into a copy.
func (r *record) trim(limit int) {
	if len(r.Body) > limit {
		r.Body, r.Truncated = policy.Truncate(r.Body, limit), true
		r.Size = int64(len(r.Body))
	}
	r.Body = bytes.Clone(r.Body)
}

// due reports whether the record is stale at now and the robots.txt is to
// be fetched again.
func (r *record) due(now time.Time) bool {
	if r.Outcome == Unreachable {
		return !now.Before(r.RetryAt)
	}
	return !now.Before(r.Expires)
}

// lifetimes are the options that say how long a record is kept.
type lifetimes struct {
	fresh, minFresh        time.Duration // Options.Freshness, MinFreshness
	minBackoff, maxBackoff time.Duration
}

// recordAfter returns the record that a fetch finishing at now with res
// leads to from prev (nil when the origin had none).
func recordAfter(prev *record, res fetchResult, now time.Time, l lifetimes) record {
	if res.notModified && prev != nil {
		// A 304 renews the copy revalidated: the good record itself, or
		// the last good copy held through an outage.
		if good := prev.parsedCopy(); good != nil {
			rec := *good
			rec.Status, rec.FetchedAt, rec.Expires, rec.URL = res.status, now, l.expires(res, now), res.url
			if res.etag != "" {
				rec.ETag = res.etag
			}
			if res.lastModified != "" {
				rec.LastModified = res.lastModified
			}
			rec.Vary = res.vary
			return rec
		}
	}
	if res.outcome != Unreachable {
		rec := record{
			Outcome: res.outcome, Status: res.status, Body: res.body, Size: res.size, Truncated: res.truncated,
			FetchedAt: now, Expires: l.expires(res, now), Vary: res.vary,
		}
		if res.outcome == Parsed {
			rec.ETag, rec.LastModified, rec.URL = res.etag, res.lastModified, res.url
		}
		return rec
	}
	rec := record{Outcome: Unreachable, Status: res.status, FetchedAt: now, Since: now, Failures: 1, Vary: res.vary}
	if res.err != nil {
		rec.Err = res.err.Error()
	}
	if prev != nil {
		if prev.Outcome == Unreachable {
			rec.Since, rec.Failures, rec.Good = prev.Since, prev.Failures+1, prev.Good
		} else {
			good := *prev
			good.Vary = false
			rec.Good = &good
		}
	}
	rec.RetryAt = now.Add(l.backoff(rec.Failures, res.retryAfter))
	return rec
}

// lifetime is how long a good outcome is reused: Options.Freshness, or the
// Cache-Control max-age less the response's Age when shorter (RFC 9309
// section 2.4, RFC 9111 section 4.2.3), never less than
// Options.MinFreshness; no-cache and no-store mean the floor.
func (l lifetimes) lifetime(res fetchResult) time.Duration {
	d := l.fresh
	switch {
	case res.noCache:
		d = 0
	case res.maxAge >= 0:
		d = min(d, res.maxAge-min(res.age, res.maxAge))
	}
	return min(max(d, l.minFresh), l.fresh)
}

// expires is when a good outcome fetched by now stops being reused: its
// lifetime counted from when the fetch began, as an HTTP cache counts a
// response's age from its request (RFC 9111 section 4.2.3), so that a
// slow fetch does not lengthen it; never sooner than Options.MinFreshness
// after now.
func (l lifetimes) expires(res fetchResult, now time.Time) time.Time {
	return now.Add(max(l.lifetime(res)-res.took, l.minFresh))
}

// backoff is the wait before fetching an unreachable robots.txt again after
// failures failed fetches in a row: Options.MinBackoff doubled for each
// failure after the first, at least a Retry-After the server sent, and at
// most Options.MaxBackoff.
func (l lifetimes) backoff(failures int, retryAfter time.Duration) time.Duration {
	d := l.minBackoff
	for i := 1; i < failures && d < l.maxBackoff; i++ {
		d *= 2
	}
	return min(max(d, retryAfter), l.maxBackoff)
}

// parsedCopy returns the record of the robots.txt that r keeps parsed: r
// itself when Parsed, or while unreachable its last good copy when that
// was parsed; nil when there is none. A record holds at most one such
// body, since only an unreachable one has a good copy.
func (r *record) parsedCopy() *record {
	if r.Outcome == Unreachable {
		r = r.Good
	}
	if r == nil || r.Outcome != Parsed {
		return nil
	}
	return r
}

// merge returns what two records of one origin, written by different
// transports, come to together: never an older outcome over a newer one,
// never losing the last good copy, and the outage clock of the longest
// run of failures that has not been ended by a success since.
func merge(a, b record) record {
	if b.FetchedAt.After(a.FetchedAt) {
		a, b = b, a
	}
	// a is the newer.
	if a.Outcome != Unreachable {
		return a
	}
	out := a
	if b.Outcome == Unreachable {
		if b.Since.Before(out.Since) {
			out.Since = b.Since
		}
		out.Failures = max(out.Failures, b.Failures)
		out.Good = newerGood(out.Good, b.Good)
	} else if !b.FetchedAt.Before(out.Since) {
		// b succeeded after a's run began: the outage counts from its
		// own failure on, and b is the last good copy.
		good := b
		good.Vary = false
		out.Good = newerGood(out.Good, &good)
		out.Since = a.FetchedAt
		out.Failures = 1
	} else {
		good := b
		out.Good = newerGood(out.Good, &good)
	}
	return out
}

// newerGood returns the more recently fetched of two good copies.
func newerGood(a, b *record) *record {
	if a == nil || b != nil && b.FetchedAt.After(a.FetchedAt) {
		return b
	}
	return a
}

// state is an origin's robots record in memory with the robots.txt it
// keeps parsed. It is immutable once built and shared by every request to
// the origin.
type state struct {
	rec    record
	robots *policy.Robots // the body of rec.parsedCopy() parsed; nil without one
	err    error          // why the fetch failed, when unreachable
}

// newState is the state of rec, holding the parse of the body it keeps
// from parses: a body is parsed once (by the fetcher, or by the renewal
// when it is not one already parsed), and a revalidated or merged record
// keeps the parse of the copy it came from. Without a parse of its body,
// the copy counts as none, as when the robots.txt was never reached: that
// is what a renewal that panicked falls back to, keeping only the earlier
// parse of the same body, since the panic may have come from the parser
// on this very body.
func newState(rec record, err error, parses ...parsedBody) *state {
	st := &state{rec: rec, err: err}
	if k := rec.parsedCopy(); k != nil {
		for _, p := range parses {
			if p.robots != nil && bytes.Equal(p.body, k.Body) {
				st.robots = p.robots
				break
			}
		}
	}
	if rec.Outcome == Unreachable && err == nil && rec.Err != "" {
		st.err = errors.New(rec.Err)
	}
	return st
}

// parsedBody is a robots.txt body with its parse.
type parsedBody struct {
	body   []byte
	robots *policy.Robots
}

// parsed returns the body st keeps with its parse; none for no state.
func (s *state) parsed() parsedBody {
	if s == nil || s.robots == nil {
		return parsedBody{}
	}
	return parsedBody{s.rec.parsedCopy().Body, s.robots}
}

// validatorsOf returns the validators to revalidate r's copy with: the
// parsed robots.txt's, or while unreachable its last good copy's; none
// for no record.
func validatorsOf(r *record) validators {
	if r == nil {
		return validators{}
	}
	if k := r.parsedCopy(); k != nil {
		return validators{etag: k.ETag, lastModified: k.LastModified}
	}
	return validators{}
}

// inForce is what decides an origin's requests at some time.
type inForce struct {
	// robots are the rules in force; nil when every request is allowed.
	robots *policy.Robots
	// refuse reports that every request is refused: the robots.txt is
	// unreachable, not yet for long enough to fall back.
	refuse bool
	// fallback reports that the origin has been unreachable for
	// Options.FallbackAfter, so that the last good copy, or with none an
	// allow-all, is in force (RFC 9309 section 2.3.1.4).
	fallback bool
}

// rules returns what decides requests at now, after being the time an
// unreachable origin falls back after.
func (s *state) rules(now time.Time, after time.Duration) inForce {
	switch s.rec.Outcome {
	case Parsed:
		return inForce{robots: s.robots}
	case Unreachable:
		if now.Sub(s.rec.Since) < after {
			return inForce{refuse: true}
		}
		return inForce{robots: s.robots, fallback: true}
	}
	return inForce{}
}

// refusedUntil returns until when every request is refused under s as of
// now for its robots.txt being unreachable (after being the time an
// outage falls back after): its retry time, or the fallback when that
// comes first; false when none is refused now.
func (s *state) refusedUntil(now time.Time, after time.Duration) (time.Time, bool) {
	if !s.rec.RetryAt.After(now) || !s.rules(now, after).refuse {
		return time.Time{}, false
	}
	until := s.rec.RetryAt
	if fallback := s.rec.Since.Add(after); fallback.Before(until) {
		until = fallback
	}
	return until, true
}

// agent returns the groups that tokens are held to under s at now, after
// being the time an unreachable origin falls back after (none when every
// request is allowed), or refuse when every request is refused.
func (s *state) agent(now time.Time, after time.Duration, tokens []string) (agent policy.Agent, refuse bool) {
	rules := s.rules(now, after)
	return rules.robots.Agent(tokens...), rules.refuse
}

// pacing returns what agent returns, but while every request is refused
// the groups of the last good copy (none without one): a request refused
// as the robots.txt is unreachable goes once it answers, paced by it, and
// the last good copy's Crawl-delay is the pace to expect.
func (s *state) pacing(now time.Time, after time.Duration, tokens []string) (agent policy.Agent, refuse bool) {
	if agent, refuse = s.agent(now, after, tokens); refuse {
		agent = s.robots.Agent(tokens...)
	}
	return agent, refuse
}

// parsedOf returns the body rec keeps with its parse: the parse of known
// for the same body, or else the body parsed now; none when rec keeps no
// parsed copy.
func parsedOf(rec *record, known ...parsedBody) parsedBody {
	k := rec.parsedCopy()
	if k == nil {
		return parsedBody{}
	}
	for _, p := range known {
		if p.robots != nil && bytes.Equal(p.body, k.Body) {
			return p
		}
	}
	return parsedBody{k.Body, policy.Parse(k.Body)}
}
