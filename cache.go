package robots

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/crawlkit/robots/policy"
)

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

// recordVersion marks the stored form; records of another version are
// ignored and refetched.
const recordVersion = 1

// record is the stored form of one origin's robots state, kept in
// Options.Cache under stateKey(origin) so that transports sharing a store
// share what they fetched.
type record struct {
	Version   int       `json:"v"`
	Outcome   Outcome   `json:"outcome"`
	Status    int       `json:"status,omitempty"`
	Body      []byte    `json:"body,omitempty"` // as parsed: cut to the size limit
	Size      int64     `json:"size,omitempty"` // decoded bytes read
	Truncated bool      `json:"truncated,omitempty"`
	FetchedAt time.Time `json:"fetchedAt"`
	Expires   time.Time `json:"expires,omitzero"` // good outcomes: when stale
	// Unreachable outcomes: the first failure of the current run, when to
	// fetch again, how many fetches failed in a row, the last error and
	// the last good copy.
	Since    time.Time `json:"since,omitzero"`
	RetryAt  time.Time `json:"retryAt,omitzero"`
	Failures int       `json:"failures,omitempty"`
	Err      string    `json:"err,omitempty"`
	Good     *record   `json:"good,omitempty"`
}

// state is an origin's robots state in memory: a record with its robots.txt
// parsed. It is immutable once built and shared by every request to the
// origin.
type state struct {
	rec    record
	robots *policy.Robots // rec.Body parsed, when rec.Outcome is Parsed
	good   *state         // rec.Good, when unreachable with a good copy
	err    error          // why the fetch failed, when unreachable
}

// newState parses rec, reusing the parse of an earlier state with the
// same body, which is what a revalidated robots.txt usually has.
func newState(rec record, err error, earlier *state) *state {
	st := &state{rec: rec, err: err}
	if rec.Outcome == Parsed {
		st.robots = parseLike(rec.Body, earlier)
	}
	if rec.Good != nil {
		st.good = &state{rec: *rec.Good}
		if rec.Good.Outcome == Parsed {
			st.good.robots = parseLike(rec.Good.Body, earlier)
		}
	}
	if rec.Outcome == Unreachable && err == nil && rec.Err != "" {
		st.err = errors.New(rec.Err)
	}
	return st
}

func parseLike(body []byte, earlier *state) *policy.Robots {
	for s := earlier; s != nil; s = s.good {
		if s.robots != nil && bytes.Equal(s.rec.Body, body) {
			return s.robots
		}
	}
	return policy.Parse(body)
}

// due reports whether the state is stale at now and the robots.txt is to
// be fetched again.
func (s *state) due(now time.Time) bool {
	if s.rec.Outcome == Unreachable {
		return !now.Before(s.rec.RetryAt)
	}
	return !now.Before(s.rec.Expires)
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
		if s.good != nil {
			return s.good.robots, false, true
		}
		return nil, false, true
	}
	return nil, false, false
}

// next returns the state that a fetch finishing at now with res leads to
// from prev (nil when the origin had none).
func (t *Transport) next(prev *state, res fetchResult, now time.Time) *state {
	if res.outcome != Unreachable {
		rec := record{
			Version: recordVersion, Outcome: res.outcome, Status: res.status,
			Body: res.body, Size: res.size, Truncated: res.truncated,
			FetchedAt: now, Expires: now.Add(t.ttl(res.maxAge)),
		}
		return newState(rec, nil, prev)
	}
	rec := record{
		Version: recordVersion, Outcome: Unreachable, Status: res.status,
		FetchedAt: now, Since: now, Failures: 1,
	}
	if res.err != nil {
		rec.Err = res.err.Error()
	}
	if prev != nil {
		if prev.rec.Outcome == Unreachable {
			rec.Since, rec.Failures, rec.Good = prev.rec.Since, prev.rec.Failures+1, prev.rec.Good
		} else {
			good := prev.rec
			rec.Good = &good
		}
	}
	rec.RetryAt = now.Add(t.backoff(rec.Failures, res.retryAfter))
	return newState(rec, res.err, prev)
}

// ttl is how long a good outcome is reused: Options.Freshness, or a
// shorter Cache-Control max-age (RFC 9309 section 2.4); maxAge is negative
// when the response had none.
func (t *Transport) ttl(maxAge time.Duration) time.Duration {
	if maxAge >= 0 && maxAge < t.freshness {
		return maxAge
	}
	return t.freshness
}

// backoff is the wait before fetching an unreachable robots.txt again after
// failures failed fetches in a row: Options.MinBackoff doubled for each
// failure after the first, at least a Retry-After the server sent, and at
// most Options.MaxBackoff.
func (t *Transport) backoff(failures int, retryAfter time.Duration) time.Duration {
	d := t.minBackoff
	for i := 1; i < failures && d < t.maxBackoff; i++ {
		d *= 2
	}
	return min(max(d, retryAfter), t.maxBackoff)
}

// stateKey is the key of an origin's record in Options.Cache. The space
// keeps it apart from the URL keys httpcache stores responses under.
func stateKey(origin string) string { return "robots-state " + origin }

// load returns the state of origin kept in the store, or nil. A record
// that cannot be read, from a store shared with other programs or
// versions, is deleted and treated as missing.
func (t *Transport) load(origin string) *state {
	data, ok := t.store.Get(stateKey(origin))
	if !ok {
		return nil
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil || !rec.valid() {
		t.store.Delete(stateKey(origin))
		return nil
	}
	return newState(rec, nil, nil)
}

// save keeps st as origin's state in the store.
func (t *Transport) save(origin string, st *state) {
	data, err := json.Marshal(st.rec)
	if err != nil {
		return
	}
	t.store.Set(stateKey(origin), data)
}

// valid reports whether a record read from the store is one this version
// wrote.
func (r *record) valid() bool {
	if r.Version != recordVersion || r.Outcome < Parsed || r.Outcome > Unreachable {
		return false
	}
	if r.Good != nil && (r.Outcome != Unreachable || r.Good.Outcome == Unreachable || r.Good.Good != nil) {
		return false
	}
	return true
}
