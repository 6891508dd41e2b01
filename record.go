package robots

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/crawlkit/robots/policy"
)

// record is one origin's robots state as it is stored: what the last fetch
// came to, the validators to revalidate it with, and, while unreachable,
// the outage clock and the last good copy. It and the functions over it
// are the pure state machine (next, due, state.rules; merge in store.go):
// they take the time and the settings as arguments and change nothing but
// their result.
type record struct {
	Outcome   Outcome   `json:"outcome"`
	Status    int       `json:"status,omitempty"`
	Size      int64     `json:"size,omitempty"` // decoded bytes kept, at most the size limit
	Truncated bool      `json:"truncated,omitempty"`
	FetchedAt time.Time `json:"fetchedAt"`
	Expires   time.Time `json:"expires,omitzero"` // good outcomes: when stale
	// Validators of a parsed body, sent back in a conditional GET.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	// Vary reports that the response varied by User-Agent, so the record
	// is kept per user agent (store.go).
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

// Outcome is what fetching an origin's robots.txt came to, and so how its
// requests are decided (RFC 9309 section 2.3.1).
type Outcome int

const (
	// Parsed: the robots.txt was fetched (2xx) and its rules decide.
	Parsed Outcome = iota + 1
	// Unavailable: the server answered 4xx (except 429), or redirected
	// too often; every request is allowed.
	Unavailable
	// Unreachable: 429, 5xx, a timeout, a network error or a broken body;
	// every request is refused until a later fetch succeeds, and after
	// Options.FallbackAfter the last good copy is used.
	Unreachable
)

// String returns "parsed", "unavailable" or "unreachable".
func (o Outcome) String() string {
	switch o {
	case Parsed:
		return "parsed"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// fetchResult is what one fetch of an origin's robots.txt came to, as the
// fetcher makes it: what next takes a record on from.
type fetchResult struct {
	outcome      Outcome
	status       int           // the final status; 0 when none arrived
	body         []byte        // when Parsed: the file cut to the size limit
	size         int64         // decoded bytes kept, at most the size limit
	truncated    bool          // the file was longer than the size limit
	maxAge       time.Duration // Cache-Control max-age; negative when none
	age          time.Duration // the response's Age header
	noCache      bool          // Cache-Control no-cache or no-store
	retryAfter   time.Duration // a 429 or 503's Retry-After
	notModified  bool          // a 304 confirmed the stored copy
	etag         string        // validators of a parsed body
	lastModified string
	vary         bool   // the response varies by User-Agent
	url          string // the last URL requested
	err          error  // why unreachable, or why a redirect was not followed
}

// unreachable is the result of a fetch of robotsURL that got no answer
// to go by, for err.
func unreachable(robotsURL string, err error) fetchResult {
	return fetchResult{outcome: Unreachable, maxAge: -1, url: robotsURL, err: err}
}

// validators are the ETag and Last-Modified of the copy to revalidate.
type validators struct{ etag, lastModified string }

// due reports whether the record is stale at now and the robots.txt is to
// be fetched again.
func (r *record) due(now time.Time) bool {
	if r.Outcome == Unreachable {
		return !now.Before(r.RetryAt)
	}
	return !now.Before(r.Expires)
}

// freshness is what the state machine needs of the options.
type freshness struct {
	freshness, minFreshness time.Duration
	minBackoff, maxBackoff  time.Duration
}

// next returns the record that a fetch finishing at now with res leads to
// from prev (nil when the origin had none).
func next(prev *record, res fetchResult, now time.Time, f freshness) record {
	if res.notModified && prev != nil {
		// A 304 renews the copy revalidated: the good record itself, or
		// the last good copy held through an outage.
		if good := prev.kept(); good != nil {
			rec := *good
			rec.Status, rec.FetchedAt, rec.Expires = res.status, now, now.Add(f.lifetime(res))
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
			FetchedAt: now, Expires: now.Add(f.lifetime(res)), Vary: res.vary,
		}
		if res.outcome == Parsed {
			rec.ETag, rec.LastModified = res.etag, res.lastModified
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
	rec.RetryAt = now.Add(f.backoff(rec.Failures, res.retryAfter))
	return rec
}

// lifetime is how long a good outcome is reused: Options.Freshness, or the
// Cache-Control max-age less the response's Age when shorter (RFC 9309
// section 2.4, RFC 9111 section 4.2.3), never less than
// Options.MinFreshness; no-cache and no-store mean the floor.
func (f freshness) lifetime(res fetchResult) time.Duration {
	d := f.freshness
	switch {
	case res.noCache:
		d = 0
	case res.maxAge >= 0:
		d = min(d, res.maxAge-min(res.age, res.maxAge))
	}
	return min(max(d, f.minFreshness), f.freshness)
}

// backoff is the wait before fetching an unreachable robots.txt again after
// failures failed fetches in a row: Options.MinBackoff doubled for each
// failure after the first, at least a Retry-After the server sent, and at
// most Options.MaxBackoff.
func (f freshness) backoff(failures int, retryAfter time.Duration) time.Duration {
	d := f.minBackoff
	for i := 1; i < failures && d < f.maxBackoff; i++ {
		d *= 2
	}
	return min(max(d, retryAfter), f.maxBackoff)
}

// kept returns the record of the robots.txt that r keeps parsed: r itself
// when Parsed, or while unreachable its last good copy when that was
// parsed; nil when there is none. A record holds at most one such body,
// since only an unreachable one has a good copy.
func (r *record) kept() *record {
	if r.Outcome == Unreachable {
		r = r.Good
	}
	if r == nil || r.Outcome != Parsed {
		return nil
	}
	return r
}

// state is an origin's robots record in memory with the robots.txt it
// keeps parsed. It is immutable once built and shared by every request to
// the origin.
type state struct {
	rec    record
	robots *policy.Robots // the body of rec.kept() parsed; nil without one
	err    error          // why the fetch failed, when unreachable
}

// newState parses rec, reusing the parse of earlier for the same body,
// which is what a revalidated robots.txt usually has.
func newState(rec record, err error, earlier *state) *state {
	st := unparsedState(rec, err, earlier)
	if k := rec.kept(); k != nil && st.robots == nil {
		st.robots = policy.Parse(k.Body)
	}
	if rec.Outcome == Unreachable && err == nil && rec.Err != "" {
		st.err = errors.New(rec.Err)
	}
	return st
}

// unparsedState is the state of rec holding earlier's parse of the same
// body, and no parse of its own: what a renewal that panicked falls back
// to, since the panic may have come from the parser on this very body.
// Without earlier's parse the copy counts as none, as when the robots.txt
// was never reached.
func unparsedState(rec record, err error, earlier *state) *state {
	st := &state{rec: rec, err: err}
	if k := rec.kept(); k != nil && earlier != nil && earlier.robots != nil && bytes.Equal(earlier.rec.kept().Body, k.Body) {
		st.robots = earlier.robots
	}
	return st
}

// rules returns what decides requests at now: the rules in force (nil when
// every request is allowed), or refuse when every request is refused.
// fallback reports that the origin has been unreachable for at least
// after, so that the last good copy, or with none an allow-all, is in force
// (RFC 9309 section 2.3.1.4).
func (s *state) rules(now time.Time, after time.Duration) (robots *policy.Robots, refuse, fallback bool) {
	switch s.rec.Outcome {
	case Parsed:
		return s.robots, false, false
	case Unreachable:
		if now.Sub(s.rec.Since) < after {
			return nil, true, false
		}
		return s.robots, false, true
	}
	return nil, false, false
}

// parsedFactor is how many bytes of memory a parsed robots.txt takes per
// byte of its text, at most: TestMemoryBoundedInBytes measures the real
// ratio on a 500 KiB file and fails if it exceeds this.
const parsedFactor = 16

// stateOverhead is what a state costs beyond its bodies and their parses.
const stateOverhead = 1 << 10

// weight estimates the bytes of memory st holds: its bodies and their
// parses.
func (s *state) weight() int64 {
	n := int64(stateOverhead)
	if s.rec.Outcome == Parsed {
		n += int64(len(s.rec.Body)) * (1 + parsedFactor)
	}
	if s.rec.Good != nil {
		n += int64(len(s.rec.Good.Body)) * (1 + parsedFactor)
	}
	return n
}

// recordOf returns st's record, nil for no state.
func recordOf(st *state) *record {
	if st == nil {
		return nil
	}
	return &st.rec
}

// validatorsOf returns the validators to revalidate r's copy with: the
// parsed robots.txt's, or while unreachable its last good copy's; none
// for no record.
func validatorsOf(r *record) validators {
	if r == nil {
		return validators{}
	}
	if k := r.kept(); k != nil {
		return validators{etag: k.ETag, lastModified: k.LastModified}
	}
	return validators{}
}
