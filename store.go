package robots

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gregjones/httpcache"
)

// store keeps origins' records in their stored form, one record per
// origin (per user agent when the robots.txt varies by it): through
// Options.Fleet's Load and Swap when there is one (and then takes the
// fleet's fetch lease), or else Options.Cache's Get and Set. It moves
// records and their bytes, and never parses a body nor merges two
// records: the renewal does both (cache.go). It contains the Cache and
// the Fleet: a record it cannot read is missing, a panic of a method is
// recovered and logged and costs only that call, and an error of the
// Fleet falls back to this process's own fetch. It is safe for
// concurrent use when the Cache is.
type store struct {
	cache   httpcache.Cache
	fleet   Fleet  // Options.Fleet; nil without one
	variant string // this transport's user-agent variant
	token   string // this transport's lease token
	maxSize int    // Options.MaxSize: a body read is cut to it
	logger  *slog.Logger

	// How long another process's fetch is waited for (Options.FetchTimeout)
	// and the clock it is waited on.
	fetchTimeout time.Duration
	now          func() time.Time
	sleep        func(context.Context, time.Duration) error
}

// swapTries is how many times a save re-reads, and the renewal merges,
// when another writer swapped the record first.
const swapTries = 4

// Lease polling: the first wait for another process's fetch, and the
// longest.
const (
	leasePollMin = 20 * time.Millisecond
	leasePollMax = 500 * time.Millisecond
)

func (s *store) init(cache httpcache.Cache, fleet Fleet, userAgent string, maxSize int, logger *slog.Logger, fetchTimeout time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	s.cache, s.fleet, s.maxSize, s.logger, s.fetchTimeout, s.now, s.sleep = cache, fleet, maxSize, logger, fetchTimeout, now, sleep
	sum := sha256.Sum256([]byte(userAgent))
	s.variant = "ua-" + hex.EncodeToString(sum[:8])
	s.token = rand.Text()
}

// recordPrefix starts the key of every record in a plain Cache: the
// prefix, the origin key, and " " and the variant for a robots.txt served
// with Vary: User-Agent. An origin key holds no space.
const recordPrefix = "robots-record "

// plainKey is the key of k in a plain Cache.
func plainKey(k RecordKey) string {
	if k.Variant == "" {
		return recordPrefix + string(k.Origin)
	}
	return recordPrefix + string(k.Origin) + " " + k.Variant
}

// load returns the record of origin this transport's user agent sees,
// and whether there is a readable one; with fresh, only one fresh at the
// store's clock. Its body comes as stored, unparsed: the renewal parses
// the body it keeps.
func (s *store) load(ctx context.Context, origin OriginKey, fresh bool) (storedRecord, bool) {
	got := s.get(ctx, RecordKey{Origin: origin})
	if got.ok && got.rec.Vary {
		got = s.get(ctx, RecordKey{Origin: origin, Variant: s.variant})
	}
	if !got.ok || fresh && got.rec.due(s.now()) {
		return storedRecord{}, false
	}
	return got, true
}

// storedRecord is what a read of one key found.
type storedRecord struct {
	rec record
	raw []byte // the bytes stored, nil when none
	ok  bool   // rec was read from them
	pk  string // the plain Cache key read, "" in a Fleet
	// newer reports bytes of a record written by a newer version, which
	// are left in place for the transports that wrote them.
	newer bool
}

// get reads the record under key. A record that cannot be read is
// missing.
func (s *store) get(ctx context.Context, key RecordKey) storedRecord {
	if s.fleet != nil {
		return s.getAt(ctx, key, "")
	}
	return s.getAt(ctx, key, plainKey(key))
}

// getAt is get with key's plainKey, pk, when the Cache is a plain one.
func (s *store) getAt(ctx context.Context, key RecordKey, pk string) storedRecord {
	var raw []byte
	var found bool
	if s.fleet != nil {
		s.inFleet(ctx, "Load", key.Origin, func(ctx context.Context) { raw, found, _ = s.fleet.Load(ctx, key) })
	} else {
		s.contain("Get", key.Origin, func() { raw, found = s.cache.Get(pk) })
	}
	if !found {
		return storedRecord{pk: pk}
	}
	rec, err := decodeRecord(raw)
	switch {
	case errors.Is(err, errNewerRecord):
		return storedRecord{raw: raw, newer: true, pk: pk}
	case err != nil:
		s.logger.Warn("robots: unreadable record ignored", "origin", key.Origin, "variant", key.Variant)
		return storedRecord{raw: raw, pk: pk}
	}
	rec.cut(s.maxSize)
	return storedRecord{rec: rec, raw: raw, ok: true, pk: pk}
}

// saveKey returns the key a record of origin like rec is saved under:
// the plain one, or for a robots.txt that varies by User-Agent this
// transport's variant, once the plain record says where to look (rec
// without its bodies, so that the marker costs little). It reports false
// when the plain key holds a record of a newer version, which is left as
// it is: this transport then keeps its record in memory only.
func (s *store) saveKey(ctx context.Context, origin OriginKey, rec record) (RecordKey, bool) {
	key := RecordKey{Origin: origin}
	if !rec.Vary {
		return key, true
	}
	marker := rec
	marker.Body, marker.Good, marker.Size, marker.Truncated = nil, nil, 0, false
	if marker.Outcome == Parsed {
		marker.Outcome = Unavailable
	}
	for range swapTries {
		old := s.get(ctx, key)
		if old.newer {
			return key, false
		}
		if s.put(ctx, key, old, marker) {
			break
		}
	}
	return RecordKey{Origin: origin, Variant: s.variant}, true
}

// put stores rec under key in place of old, what a get of key read (in a
// plain Cache, under the key it was read from): by
// compare-and-swap in a Fleet, or by a write in a plain Cache. It
// reports false when another writer swapped first, so that the caller
// reads again and merges; a store that fails counts as stored, since
// the record in memory is then the one to go on with.
func (s *store) put(ctx context.Context, key RecordKey, old storedRecord, rec record) bool {
	data := rec.encode()
	if s.fleet == nil {
		s.contain("Set", key.Origin, func() { s.cache.Set(old.pk, data) })
		return true
	}
	stored, err := false, errors.New("robots: Swap panicked")
	s.inFleet(ctx, "Swap", key.Origin, func(ctx context.Context) { stored, err = s.fleet.Swap(ctx, key, old.raw, data) })
	return stored || err != nil
}

// inFleet runs call, the Fleet's method op for origin, as contain does,
// on ctx with Options.FetchTimeout as its deadline if it has none, as in
// a renewal, which runs detached from the requests that share it: a
// store that never answers cannot hold the renewal, and every request to
// the origin, for good.
func (s *store) inFleet(ctx context.Context, op string, origin OriginKey, call func(context.Context)) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = boundFor(ctx, s.fetchTimeout)
		defer cancel()
	}
	s.contain(op, origin, func() { call(ctx) })
}

// contain runs call, a method op of the Cache for origin, recovering and
// logging its panic with the stack: a broken Cache must cost only the
// call, never the request or the process.
func (s *store) contain(op string, origin OriginKey, call func()) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("robots: panic in Cache."+op, "origin", origin, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	call()
}

// leaseAnswer is what asking for the fleet's fetch lease came to.
type leaseAnswer int

const (
	// leaseNone: fetch without a lease (the Cache has none, or it cannot
	// be asked: the store being down must not stop this process's own
	// fetch, nor another holder's wait run out).
	leaseNone leaseAnswer = iota
	// leaseHeld: this transport holds the lease; fetch, save, let go.
	leaseHeld
	// leaseTheirs: another process fetched; its record is the answer.
	leaseTheirs
)

// lease takes the fleet's fetch lease on origin for twice the fetch
// timeout, at now. When another process holds it, lease waits for that
// process's record, polling with a growing interval within the fetch
// timeout; when the lease came free or is taken here, it looks once
// more for a record the last holder stored before letting go, which
// saves a second fetch. A record found so, fresh, is returned (and the
// lease, if taken, given back): the caller then fetches nothing.
func (s *store) lease(ctx context.Context, origin OriginKey, now time.Time) (leaseAnswer, *storedRecord) {
	if s.fleet == nil {
		return leaseNone, nil
	}
	ttl := 2 * s.fetchTimeout
	answer := s.takeLease(ctx, origin, ttl)
	for d, deadline := leasePollMin, now.Add(s.fetchTimeout); answer == leaseTheirs; d = min(2*d, leasePollMax) {
		if !s.now().Before(deadline) || s.sleep(ctx, d) != nil {
			return leaseNone, nil
		}
		if got, ok := s.load(ctx, origin, true); ok {
			return leaseTheirs, &got
		}
		answer = s.takeLease(ctx, origin, ttl)
	}
	if answer == leaseHeld {
		if got, ok := s.load(ctx, origin, true); ok {
			s.unlease(ctx, origin)
			return leaseTheirs, &got
		}
	}
	return answer, nil
}

// takeLease asks the Fleet for origin's lease once: leaseHeld,
// leaseTheirs while another holds it, or leaseNone when it cannot be
// asked.
func (s *store) takeLease(ctx context.Context, origin OriginKey, ttl time.Duration) leaseAnswer {
	held, err := false, errors.New("robots: Lease panicked")
	s.inFleet(ctx, "Lease", origin, func(ctx context.Context) { held, err = s.fleet.Lease(ctx, origin, s.token, ttl) })
	switch {
	case err != nil:
		return leaseNone
	case held:
		return leaseHeld
	}
	return leaseTheirs
}

// unlease gives origin's lease back.
func (s *store) unlease(ctx context.Context, origin OriginKey) {
	s.inFleet(ctx, "Unlease", origin, func(ctx context.Context) { s.fleet.Unlease(ctx, origin, s.token) })
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
	out := make([]byte, 0, len(recordMagic)+headRoom+len(r.Body)+len(goodBody))
	out = append(out, recordMagic...)
	out = r.appendHead(out)
	out = append(out, '\n')
	out = append(out, r.Body...)
	return append(out, goodBody...)
}

// headRoom is room enough for most records' header.
const headRoom = 256

// appendHead appends r's JSON header, as json.Marshal writes it
// (TestRecordHeadIsJSON holds the two together), without reflection:
// every new origin stores a record, and encoding/json took a tenth of
// its cost.
func (r *record) appendHead(b []byte) []byte {
	b = append(b, `{"outcome":`...)
	b = strconv.AppendInt(b, int64(r.Outcome), 10)
	if r.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(r.Status), 10)
	}
	if r.Size != 0 {
		b = strconv.AppendInt(append(b, `,"size":`...), r.Size, 10)
	}
	if r.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	b = appendTime(append(b, `,"fetchedAt":`...), r.FetchedAt)
	if !r.Expires.IsZero() {
		b = appendTime(append(b, `,"expires":`...), r.Expires)
	}
	if r.URL != "" {
		b = appendString(append(b, `,"url":`...), r.URL)
	}
	if r.ETag != "" {
		b = appendString(append(b, `,"etag":`...), r.ETag)
	}
	if r.LastModified != "" {
		b = appendString(append(b, `,"lastModified":`...), r.LastModified)
	}
	if r.Vary {
		b = append(b, `,"vary":true`...)
	}
	if !r.Since.IsZero() {
		b = appendTime(append(b, `,"since":`...), r.Since)
	}
	if !r.RetryAt.IsZero() {
		b = appendTime(append(b, `,"retryAt":`...), r.RetryAt)
	}
	if r.Failures != 0 {
		b = strconv.AppendInt(append(b, `,"failures":`...), int64(r.Failures), 10)
	}
	if r.Err != "" {
		b = appendString(append(b, `,"err":`...), r.Err)
	}
	if r.Good != nil {
		b = r.Good.appendHead(append(b, `,"good":`...))
	}
	if r.BodyLen != 0 {
		b = strconv.AppendInt(append(b, `,"bodyLen":`...), int64(r.BodyLen), 10)
	}
	return append(b, '}')
}

// appendTime appends t as a JSON string, as time.Time.MarshalJSON writes
// it. A year past 9999, which MarshalJSON refuses, makes a record that
// reads back as missing, never a panic.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendString appends s as a JSON string, as json.Marshal writes it:
// quotes and backslashes escaped here, anything rarer (control
// characters, <, >, &, any byte past ASCII) by json itself.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	for i := range len(s) {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
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
