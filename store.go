package robots

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/gregjones/httpcache"
)

// recordPrefix starts the key of every record a transport stores:
// recordPrefix + originKey, and + " " + a user-agent variant for a
// robots.txt served with Vary: User-Agent. An origin key never holds a
// space, so a store can find it between the first space and the next.
const recordPrefix = "robots-record "

// store loads and saves origins' records through Options.Cache, one record
// per origin (per user agent when the robots.txt varies by it). It guards
// against the Cache: a record it cannot read is missing, a panic of its
// methods is recovered and logged, and an error of a fleet capability
// falls back to this process's own fetch. It is safe for concurrent use
// when the Cache is.
type store struct {
	cache   httpcache.Cache
	leaser  Leaser  // nil when the Cache has no leases
	swapper Swapper // nil when the Cache has no compare-and-swap
	variant string  // this transport's user-agent variant
	token   string  // this transport's lease token
	logger  *slog.Logger

	// How long another process's fetch is waited for (Options.FetchTimeout)
	// and the clock it is waited on.
	fetchTimeout time.Duration
	now          func() time.Time
	sleep        func(context.Context, time.Duration) error
}

// swapTries is how many times a save re-reads and merges when another
// writer swapped the record first.
const swapTries = 4

// Lease polling: the first wait for another process's fetch, and the
// longest.
const (
	leasePollMin = 20 * time.Millisecond
	leasePollMax = 500 * time.Millisecond
)

func newStore(cache httpcache.Cache, userAgent string, logger *slog.Logger, fetchTimeout time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) *store {
	s := &store{cache: cache, logger: logger, fetchTimeout: fetchTimeout, now: now, sleep: sleep}
	s.leaser, _ = cache.(Leaser)
	s.swapper, _ = cache.(Swapper)
	sum := sha256.Sum256([]byte(userAgent))
	s.variant = "ua-" + hex.EncodeToString(sum[:8])
	s.token = rand.Text()
	return s
}

// recordKey is the key of originKey's record.
func recordKey(originKey string) string { return recordPrefix + originKey }

// renew returns originKey's record brought up to date from base, the
// newest record this transport holds or the store has (nil for none):
// base itself when it is fresh at now; else, in turn, a fresh record that
// another process holding the fleet's lease stores while this one waits
// for it, or that the last holder stored before letting go; or else the
// record that fetch makes, saved. fetched reports the last case; the
// lease, when this transport took it, is held until the record is saved.
func (s *store) renew(ctx context.Context, originKey string, base *record, now time.Time, fetch func() record) (rec record, fetched bool) {
	if base != nil && !base.due(now) {
		return *base, false
	}
	ttl := 2 * s.fetchTimeout
	held, mayFetch := s.lease(ctx, originKey, ttl)
	if !mayFetch {
		var ok bool
		if rec, held, ok = s.awaitOther(ctx, originKey, now.Add(s.fetchTimeout), ttl); ok {
			return rec, false
		}
	}
	if held {
		defer s.unlease(ctx, originKey)
		// The last holder may have saved and let go between our load and
		// our lease: its record saves a second fetch.
		if rec, ok := s.load(originKey); ok && !rec.due(s.now()) {
			return rec, false
		}
	}
	return s.save(ctx, originKey, fetch()), true
}

// load returns the record of originKey this transport's user agent sees,
// and whether there is a readable one.
func (s *store) load(originKey string) (record, bool) {
	rec, _, ok, _ := s.get(recordKey(originKey))
	if ok && rec.Vary {
		rec, _, ok, _ = s.get(s.variantKey(originKey))
	}
	return rec, ok
}

// variantKey is the key of originKey's record for this transport's user
// agent.
func (s *store) variantKey(originKey string) string {
	return recordKey(originKey) + " " + s.variant
}

// get reads the record under key, with its stored bytes. A record that
// cannot be read is missing; one of a newer version is missing too, and
// newer reports it so that it is left in place for the transports that
// wrote it.
func (s *store) get(key string) (rec record, raw []byte, ok, newer bool) {
	defer s.recoverCache("Get", key)
	raw, found := s.cache.Get(key)
	if !found {
		return record{}, nil, false, false
	}
	rec, err := decodeRecord(raw)
	if err != nil {
		newer = errors.Is(err, errNewerRecord)
		if !newer {
			s.logger.Warn("robots: unreadable record ignored", "key", key)
		}
		return record{}, raw, false, newer
	}
	return rec, raw, true, false
}

// save stores rec as originKey's record, merged with what another
// transport may have stored meanwhile, and returns the merged record. A
// record of a newer version is left as it is: this transport keeps its
// own in memory only.
func (s *store) save(ctx context.Context, originKey string, rec record) record {
	key := recordKey(originKey)
	if rec.Vary {
		if _, _, _, newer := s.get(key); newer {
			return rec
		}
		// The plain key only says where to look; its own record is the
		// same without bodies, so a marker costs little.
		marker := rec
		marker.Body, marker.Good, marker.Size, marker.Truncated = nil, nil, 0, false
		if marker.Outcome == Parsed {
			marker.Outcome = Unavailable
		}
		s.put(key, marker.encode())
		key = s.variantKey(originKey)
	}
	if s.swapper != nil {
		for range swapTries {
			old, raw, ok, newer := s.get(key)
			if newer {
				return rec
			}
			merged := rec
			if ok {
				merged = merge(old, rec)
			}
			stored, err := s.swap(ctx, key, raw, merged.encode())
			if err != nil {
				break
			}
			if stored {
				return merged
			}
		}
	}
	old, _, ok, newer := s.get(key)
	if newer {
		return rec
	}
	if ok {
		rec = merge(old, rec)
	}
	s.put(key, rec.encode())
	return rec
}

// put sets key to data.
func (s *store) put(key string, data []byte) {
	defer s.recoverCache("Set", key)
	s.cache.Set(key, data)
}

// swap is Swapper.Swap, its panics taken as errors.
func (s *store) swap(ctx context.Context, key string, old, new []byte) (stored bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logPanic("Swap", key, p)
			err = fmt.Errorf("robots: Swap panicked: %v", p)
		}
	}()
	return s.swapper.Swap(ctx, key, old, new)
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

// recordMagic starts every stored record: its last line names the format
// version. A record of another version is treated as missing and left in
// place, since a newer transport sharing the store may have written it.
const recordMagic = "robots-record v2\n"

// encode returns the stored form of r: recordMagic, a JSON header line,
// then the body and the good copy's body, raw, so that a body is held once
// and costs no base64.
func (r record) encode() []byte {
	r.BodyLen = len(r.Body)
	var goodBody []byte
	if r.Good != nil {
		g := *r.Good
		g.BodyLen, goodBody = len(g.Body), g.Body
		r.Good = &g
	}
	head, err := json.Marshal(r)
	if err != nil {
		// A record holds only strings, numbers and times of this
		// package's making; json cannot fail on them.
		panic(err)
	}
	out := make([]byte, 0, len(recordMagic)+len(head)+1+len(r.Body)+len(goodBody))
	out = append(out, recordMagic...)
	out = append(out, head...)
	out = append(out, '\n')
	out = append(out, r.Body...)
	return append(out, goodBody...)
}

// errRecord is why a stored record cannot be read.
var errRecord = errors.New("robots: unreadable record")

// errNewerRecord says that a stored record was written by a newer version.
var errNewerRecord = errors.New("robots: record of a newer version")

// decodeRecord reads a stored record. A record cut short, damaged, or of
// another version is an error: the caller treats it as missing.
func decodeRecord(data []byte) (record, error) {
	var r record
	rest, ok := bytes.CutPrefix(data, []byte(recordMagic))
	if !ok {
		if bytes.HasPrefix(data, []byte("robots-record v")) {
			return r, errNewerRecord
		}
		return r, errRecord
	}
	head, rest, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok || json.Unmarshal(head, &r) != nil {
		return r, errRecord
	}
	goodLen := 0
	if r.Good != nil {
		goodLen = r.Good.BodyLen
	}
	if r.BodyLen < 0 || goodLen < 0 || r.BodyLen > MaxMaxSize || goodLen > MaxMaxSize || len(rest) != r.BodyLen+goodLen {
		return r, errRecord
	}
	r.Body = rest[:r.BodyLen:r.BodyLen]
	if r.Good != nil {
		r.Good.Body = rest[r.BodyLen:]
	}
	if !r.valid() {
		return r, errRecord
	}
	return r, nil
}

// valid reports whether a decoded record is one this version could have
// written.
func (r *record) valid() bool {
	if r.Outcome < Parsed || r.Outcome > Unreachable || r.FetchedAt.IsZero() {
		return false
	}
	if r.Outcome != Parsed && len(r.Body) > 0 {
		return false
	}
	if g := r.Good; g != nil {
		if r.Outcome != Unreachable || g.Outcome == Unreachable || g.Good != nil || g.Outcome != Parsed && len(g.Body) > 0 {
			return false
		}
	}
	return true
}

// recoverCache recovers a panic of the Cache's method op on key and logs
// it with its stack; the call then counts as a miss.
func (s *store) recoverCache(op, key string) {
	if p := recover(); p != nil {
		s.logPanic(op, key, p)
	}
}

func (s *store) logPanic(op, key string, p any) {
	s.logger.Error("robots: panic in Cache."+op, "key", key, "panic", p, "stack", string(debug.Stack()))
}

// lease takes the fleet's fetch lease on originKey for ttl. It reports
// whether this transport may fetch: when it holds the lease, when the
// Cache has no leases, or when the lease cannot be asked for (the store
// being down must not stop this process's own fetch).
func (s *store) lease(ctx context.Context, originKey string, ttl time.Duration) (held, fetch bool) {
	if s.leaser == nil {
		return false, true
	}
	var ok bool
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				s.logPanic("Lease", originKey, p)
				err = errors.New("panic")
			}
		}()
		ok, err = s.leaser.Lease(ctx, recordKey(originKey), s.token, ttl)
		return err
	}()
	if err != nil {
		return false, true
	}
	return ok, ok
}

// unlease gives the lease on originKey back.
func (s *store) unlease(ctx context.Context, originKey string) {
	defer s.recoverCache("Unlease", originKey)
	s.leaser.Unlease(ctx, recordKey(originKey), s.token)
}

// awaitOther waits for another process holding originKey's lease to store
// a record fresh at the clock's time, polling with a growing interval
// until deadline. It returns that record, or ok false when none came and
// the caller may fetch itself: the lease came free (held reports that
// this transport took it) or the wait ran out.
func (s *store) awaitOther(ctx context.Context, originKey string, deadline time.Time, ttl time.Duration) (rec record, held, ok bool) {
	for d := leasePollMin; s.now().Before(deadline); d = min(2*d, leasePollMax) {
		if s.sleep(ctx, d) != nil {
			return record{}, false, false
		}
		if rec, found := s.load(originKey); found && !rec.due(s.now()) {
			return rec, false, true
		}
		if held, fetch := s.lease(ctx, originKey, ttl); fetch {
			return record{}, held, false
		}
	}
	return record{}, false, false
}
