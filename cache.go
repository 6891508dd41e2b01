package robots

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gregjones/httpcache"
	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"

	"github.com/crawlkit/robots/policy"
)

// robotsCache is what a transport knows of each origin's robots.txt and
// when to renew it: the origins held in memory, bounded in count and in
// the bytes their parsed robots.txt take (otter's W-TinyLFU forgets the
// least useful first); each origin's record and its pure state machine;
// and one renewal per origin at a time, which takes the fleet's lease,
// loads the newest stored record, fetches when that is due and saves the
// result merged with what other writers stored. A body is parsed once,
// where it is read: by the fetcher, or by the store. A forgotten origin's
// record stays in the store. The decider, at the end of the file, decides
// requests under the state the cache gives. It is safe for concurrent use.
type robotsCache struct {
	table   *otter.Cache[originID, *origin]
	flight  singleflight.Group // one renewal per origin, keyed by its store key
	store   store
	fetcher *fetcher
	times   lifetimes
	now     func() time.Time
	logger  *slog.Logger
	stats   *counters
}

// init readies c to hold cfg.maxOrigins origins weighing at most
// cfg.maxRobotsBytes, their records kept in cache and fetched on base.
func (c *robotsCache) init(cfg *config, cache httpcache.Cache, base http.RoundTripper, now func() time.Time, sleep func(context.Context, time.Duration) error, stats *counters) {
	c.now, c.logger, c.stats = now, cfg.logger, stats
	c.times = lifetimes{fresh: cfg.freshness, minFresh: cfg.minFreshness, minBackoff: cfg.minBackoff, maxBackoff: cfg.maxBackoff}
	c.store.init(cache, cfg.userAgent, cfg.logger, cfg.fetchTimeout, now, sleep)
	c.fetcher = &fetcher{
		base: base, userAgent: cfg.userAgent, maxRedirects: cfg.maxRedirects, maxSize: cfg.maxSize,
		timeout: cfg.fetchTimeout, now: now, logger: cfg.logger,
	}
	c.table = otter.Must(&otter.Options[originID, *origin]{
		MaximumWeight: uint64(cfg.maxRobotsBytes),
		Weigher: countingWeigher(cfg.maxRobotsBytes, cfg.maxOrigins, func(_ originID, o *origin) int64 {
			return o.weight()
		}),
	})
}

// origin is what a transport holds in memory for one origin: its robots
// state and a pointer to its politeness schedule, which the pacer owns.
// It is safe for concurrent use.
type origin struct {
	id originID
	// key names the origin in the store and in the pacer's table (see
	// originID.key).
	key OriginKey

	// st is read on every request and written only after a renewal, so
	// it is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// sched is the origin's schedule in the pacer's table, nil until the
	// first request looks it up.
	sched atomic.Pointer[schedule]
}

// current returns the origin's state, or nil before the first renewal.
func (o *origin) current() *state { return o.st.Load() }

// originFor returns the origin id names, adding it if it is not held.
func (c *robotsCache) originFor(id originID) *origin {
	if o, ok := c.table.GetIfPresent(id); ok {
		return o
	}
	o, _ := c.table.SetIfAbsent(id, &origin{id: id, key: id.key()})
	return o
}

// len returns the number of origins held.
func (c *robotsCache) len() int {
	c.table.CleanUp()
	return c.table.EstimatedSize()
}

// state returns o's robots state, renewed when it is not held or is due.
// Concurrent callers share one renewal, run detached from ctx under the
// fetcher's own timeout, so a caller whose context ends returns at once
// with ctx.Err() while the renewal goes on for the others.
//
// now is the time of the caller's request; state returns it, or the time
// after the renewal when it had to wait for one.
func (c *robotsCache) state(ctx context.Context, o *origin, now time.Time) (*state, time.Time, error) {
	if st := o.current(); st != nil && !st.rec.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := c.flight.DoChan(string(o.key), func() (any, error) { return c.renew(detached, o), nil })
	select {
	case res := <-ch:
		return res.Val.(*state), c.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// renew brings o's state up to date, in four steps: load the newest
// record stored (another transport sharing the store may have fetched
// it), take the fleet's fetch lease (or wait for the record of the
// process holding it), fetch, and save what the fetch leads to. It
// makes the result o's state and weighs o again.
func (c *robotsCache) renew(ctx context.Context, o *origin) (st *state) {
	prev := o.current()
	base := recordOf(prev)
	defer func() {
		// The store, the fetcher and the logger contain their plug-ins'
		// panics; this catches the rest, which singleflight would
		// re-raise in a goroutine of its own, killing the process.
		if p := recover(); p != nil {
			c.logger.Error("robots: panic renewing robots.txt", "origin", o.key, "panic", p, "stack", string(debug.Stack()))
			res := unreachable("", fmt.Errorf("robots: panic: %v", p))
			st = c.keep(o, newState(recordAfter(base, res, c.now(), c.times), res.err, prev.parsed()))
		}
	}()
	now := c.now()
	if base != nil && !base.due(now) {
		// The renewal before this one brought it up to date.
		return prev
	}
	// Load: another transport sharing the store may have fetched since.
	parses := []parsedBody{prev.parsed()}
	if stored, ok := c.store.load(ctx, o.key, prev.parsed(), false); ok && (base == nil || stored.rec.FetchedAt.After(base.FetchedAt)) {
		base = &stored.rec
		parses = append(parses, stored.parse)
	}
	var res fetchResult
	if base == nil || base.due(now) {
		// Lease: one fetch per origin across the fleet; while another
		// process holds the lease, its record is waited for.
		lease, theirs := c.store.lease(ctx, o.key, prev.parsed(), now)
		if lease == leaseHeld {
			defer c.store.unlease(ctx, o.key)
		}
		if theirs != nil {
			base = &theirs.rec
			parses = append(parses, theirs.parse)
		} else {
			// Fetch, and save what the fetch leads to, merged with what
			// other writers stored meanwhile.
			robotsURL, host := o.id.robotsURL()
			v := validatorsOf(base)
			res = c.fetcher.fetch(ctx, robotsURL, host, v)
			saved := c.store.save(ctx, o.key, recordAfter(base, res, c.now(), c.times))
			base = &saved.rec
			parses = append(parses, parsedBody{res.body, res.robots}, saved.parse)
			c.stats.fetched(res)
			c.logFetch(o, res, base)
		}
	}
	return c.keep(o, newState(*base, res.err, parses...))
}

// keep makes st o's state and weighs o again.
func (c *robotsCache) keep(o *origin, st *state) *state {
	o.st.Store(st)
	if cur, ok := c.table.GetIfPresent(o.id); ok && cur == o {
		c.table.Set(o.id, o)
	}
	return st
}

// logFetch logs one robots.txt fetch of o, which led to rec.
func (c *robotsCache) logFetch(o *origin, res fetchResult, rec *record) {
	attrs := []any{"origin", o.key, "outcome", res.outcome.String(), "status", res.status, "url", res.url}
	switch res.outcome {
	case Unreachable:
		attrs = append(attrs, "error", res.err, "failures", rec.Failures, "retryAt", rec.RetryAt)
	case Unavailable:
		if res.err != nil {
			attrs = append(attrs, "reason", res.err)
		}
		attrs = append(attrs, "expires", rec.Expires)
	case Parsed:
		attrs = append(attrs, "bytes", res.size, "truncated", res.truncated, "revalidated", res.notModified, "expires", rec.Expires)
	}
	c.logger.Info("robots: fetched robots.txt", attrs...)
}

// originID identifies an origin without building a string: RFC 9309
// section 2.3 scopes a robots.txt to its scheme, host and port. host is
// the canonical host[:port] of the site whose robots.txt applies (as
// url.URL.Host holds it), which a canonically spelled URL already holds;
// addr, for a request whose Host header or absolute-form request-URI
// names another site than its URL's host, is the canonical host[:port]
// it is sent to, and "" otherwise.
type originID struct {
	https bool
	host  string
	addr  string
}

// key returns the origin's name in the store: scheme://host[:port], or
// for a site reached at another address scheme://site|addr, a "|" being
// what no host holds. A host's characters that a URL escapes (an IPv6
// zone's "%") are escaped in it.
func (id originID) key() OriginKey {
	scheme := "http"
	if id.https {
		scheme = "https"
	}
	k := (&url.URL{Scheme: scheme, Host: id.host}).String()
	if id.addr != "" {
		k += "|" + strings.TrimPrefix((&url.URL{Host: id.addr}).String(), "//")
	}
	return OriginKey(k)
}

// robotsURL returns where the origin's robots.txt is fetched and the Host
// header to send: "" for the URL's own, or the site a Host override names,
// since a request whose Host overrides its URL's host is governed by that
// site's robots.txt, fetched from the address it is sent to.
func (id originID) robotsURL() (*url.URL, string) {
	u := &url.URL{Scheme: "http", Host: id.host, Path: "/robots.txt"}
	if id.https {
		u.Scheme = "https"
	}
	if id.addr == "" {
		return u, ""
	}
	u.Host = id.addr
	return u, id.host
}

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
			rec.Status, rec.FetchedAt, rec.Expires, rec.URL = res.status, now, now.Add(l.lifetime(res)), res.url
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
			FetchedAt: now, Expires: now.Add(l.lifetime(res)), Vary: res.vary,
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
// from parses: a body is parsed once, where it is read (by the fetcher,
// or by the store), and a revalidated or merged record keeps the parse
// of the copy it came from. Without a parse of its body, the copy counts
// as none, as when the robots.txt was never reached: that is what a
// renewal that panicked falls back to, keeping only the earlier parse of
// the same body, since the panic may have come from the parser on this
// very body.
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
	if k := r.parsedCopy(); k != nil {
		return validators{etag: k.ETag, lastModified: k.LastModified}
	}
	return validators{}
}

// store keeps origins' records in Options.Cache in their stored form, one
// record per origin (per user agent when the robots.txt varies by it),
// through a FleetStore's Load and Swap when the Cache is one (and then
// takes the fleet's fetch lease), or else its Get and Set. It contains
// the Cache: a record it cannot read is missing, a panic of a method is
// recovered and logged and costs only that call, and an error of the
// FleetStore falls back to this process's own fetch. It is safe for
// concurrent use when the Cache is.
type store struct {
	cache   httpcache.Cache
	fleet   FleetStore // nil when the Cache is not shared by a fleet
	variant string     // this transport's user-agent variant
	token   string     // this transport's lease token
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

func (s *store) init(cache httpcache.Cache, userAgent string, logger *slog.Logger, fetchTimeout time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	s.cache, s.logger, s.fetchTimeout, s.now, s.sleep = cache, logger, fetchTimeout, now, sleep
	s.fleet, _ = cache.(FleetStore)
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
// store's clock. The record comes parsed, its body's parse taken from
// known when it is the same body.
func (s *store) load(ctx context.Context, origin OriginKey, known parsedBody, fresh bool) (storedRecord, bool) {
	got := s.get(ctx, RecordKey{Origin: origin})
	if got.ok && got.rec.Vary {
		got = s.get(ctx, RecordKey{Origin: origin, Variant: s.variant})
	}
	if !got.ok || fresh && got.rec.due(s.now()) {
		return storedRecord{}, false
	}
	if k := got.rec.parsedCopy(); k != nil {
		got.parse = known
		if known.robots == nil || !bytes.Equal(k.Body, known.body) {
			got.parse = parsedBody{k.Body, policy.Parse(k.Body)}
		}
	}
	return got, true
}

// storedRecord is what a read of one key found.
type storedRecord struct {
	rec record
	raw []byte // the bytes stored, nil when none
	ok  bool   // rec was read from them
	// newer reports bytes of a record written by a newer version, which
	// are left in place for the transports that wrote them.
	newer bool
	// parse is the body rec keeps with its parse, once load or save
	// parsed it.
	parse parsedBody
}

// get reads the record under key. A record that cannot be read is
// missing.
func (s *store) get(ctx context.Context, key RecordKey) storedRecord {
	var raw []byte
	var found bool
	if s.fleet != nil {
		s.contain("Load", key.Origin, func() { raw, found, _ = s.fleet.Load(ctx, key) })
	} else {
		s.contain("Get", key.Origin, func() { raw, found = s.cache.Get(plainKey(key)) })
	}
	if !found {
		return storedRecord{}
	}
	rec, err := decodeRecord(raw)
	switch {
	case errors.Is(err, errNewerRecord):
		return storedRecord{raw: raw, newer: true}
	case err != nil:
		s.logger.Warn("robots: unreadable record ignored", "origin", key.Origin, "variant", key.Variant)
		return storedRecord{raw: raw}
	}
	return storedRecord{rec: rec, raw: raw, ok: true}
}

// save stores rec as origin's record, merged with what another transport
// may have stored meanwhile, and returns the merged record, with the
// parse of the stored body it keeps when that is not rec's own. A record
// of a newer version is left as it is: this transport keeps its own in
// memory only.
func (s *store) save(ctx context.Context, origin OriginKey, rec record) storedRecord {
	key := RecordKey{Origin: origin}
	if rec.Vary {
		// The plain record only says where to look; it is the record
		// without bodies, so a marker costs little.
		marker := rec
		marker.Body, marker.Good, marker.Size, marker.Truncated = nil, nil, 0, false
		if marker.Outcome == Parsed {
			marker.Outcome = Unavailable
		}
		if !s.write(ctx, key, func(storedRecord) record { return marker }) {
			return storedRecord{rec: rec, ok: true}
		}
		key.Variant = s.variant
	}
	saved := storedRecord{rec: rec, ok: true}
	s.write(ctx, key, func(old storedRecord) record {
		saved.rec, saved.parse = old.mergedWith(rec), parsedBody{}
		// The merge may keep the other writer's copy: a body read here.
		if k, kept, own := old.rec.parsedCopy(), saved.rec.parsedCopy(), rec.parsedCopy(); old.ok && k != nil && kept != nil &&
			bytes.Equal(kept.Body, k.Body) && (own == nil || !bytes.Equal(own.Body, k.Body)) {
			saved.parse = parsedBody{k.Body, policy.Parse(k.Body)}
		}
		return saved.rec
	})
	return saved
}

// write stores what next makes of the record stored under key: by
// compare-and-swap in a FleetStore, re-reading when another writer
// swapped first, or by a read and a write in a plain Cache. It reports
// false, storing nothing, when the stored record is of a newer version.
func (s *store) write(ctx context.Context, key RecordKey, next func(storedRecord) record) bool {
	if s.fleet == nil {
		old := s.get(ctx, key)
		if old.newer {
			return false
		}
		data := next(old).encode()
		s.contain("Set", key.Origin, func() { s.cache.Set(plainKey(key), data) })
		return true
	}
	for range swapTries {
		old := s.get(ctx, key)
		if old.newer {
			return false
		}
		stored, err := false, errors.New("robots: Swap panicked")
		data := next(old).encode()
		s.contain("Swap", key.Origin, func() { stored, err = s.fleet.Swap(ctx, key, old.raw, data) })
		if stored || err != nil {
			// Stored, or the store is down: either way the record in
			// memory is the one to go on with.
			break
		}
	}
	return true
}

// mergedWith returns rec merged with the record read, if one was.
func (got storedRecord) mergedWith(rec record) record {
	if got.ok {
		return merge(got.rec, rec)
	}
	return rec
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
func (s *store) lease(ctx context.Context, origin OriginKey, known parsedBody, now time.Time) (leaseAnswer, *storedRecord) {
	if s.fleet == nil {
		return leaseNone, nil
	}
	ttl := 2 * s.fetchTimeout
	answer := s.takeLease(ctx, origin, ttl)
	for d, deadline := leasePollMin, now.Add(s.fetchTimeout); answer == leaseTheirs; d = min(2*d, leasePollMax) {
		if !s.now().Before(deadline) || s.sleep(ctx, d) != nil {
			return leaseNone, nil
		}
		if got, ok := s.load(ctx, origin, known, true); ok {
			return leaseTheirs, &got
		}
		answer = s.takeLease(ctx, origin, ttl)
	}
	if answer == leaseHeld {
		if got, ok := s.load(ctx, origin, known, true); ok {
			s.unlease(ctx, origin)
			return leaseTheirs, &got
		}
	}
	return answer, nil
}

// takeLease asks the FleetStore for origin's lease once: leaseHeld,
// leaseTheirs while another holds it, or leaseNone when it cannot be
// asked.
func (s *store) takeLease(ctx context.Context, origin OriginKey, ttl time.Duration) leaseAnswer {
	held, err := false, errors.New("robots: Lease panicked")
	s.contain("Lease", origin, func() { held, err = s.fleet.Lease(ctx, origin, s.token, ttl) })
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
	s.contain("Unlease", origin, func() { s.fleet.Unlease(ctx, origin, s.token) })
}

// decider decides requests under an origin's robots state, and counts and
// logs what it decides. It holds no state of its own and is safe for
// concurrent use.
type decider struct {
	tokens        []string // Options.Agents, or the product token of Options.UserAgent
	purposes      []string // Options.Purposes
	fallbackAfter time.Duration
	logger        *slog.Logger
	stats         *counters
}

// decide returns the *DisallowedError refusing tg under st at now, or nil
// with the groups that allowed it. Every form of the request-URI that a
// server may serve must be allowed: as sent, with dot segments resolved,
// and with repeated slashes merged first. A request for /robots.txt
// itself is always allowed, and st may then be nil.
func (d *decider) decide(st *state, tg *wireTarget, now time.Time) (policy.Agent, error) {
	var own [1]string
	tokens := d.tokensFor(tg, own[:0])
	if tg.robotsTxt {
		// Allowed, but paced like any request by the groups in force.
		d.stats.robotsRequests.Add(1)
		var agent policy.Agent
		if st != nil {
			agent, _ = st.agent(now, d.fallbackAfter, tokens)
		}
		return agent, nil
	}
	agent, refuse := st.agent(now, d.fallbackAfter, tokens)
	var e *DisallowedError
	switch {
	case refuse:
		e = &DisallowedError{URL: tg.url.Redacted(), Token: primaryToken(tokens), Unreachable: true, RetryAt: st.rec.RetryAt, Err: st.err}
	case !agent.Allowed(tg.uri):
		// Refused: only now is the explanation worth building.
		dec := agent.Decide(tg.uri)
		rule := dec.Rule // a copy, so that dec itself stays off the heap
		prefs := agent.Preferences(tg.uri)
		e = &DisallowedError{URL: tg.url.Redacted(), Token: refusedFor(dec.Token, tokens), Rule: &rule, Resolved: dec.Resolved, Preferences: &prefs}
	default:
		// Preferences are read only for a crawler that declared its
		// purposes: reporting them costs nothing on an allowed request.
		if len(d.purposes) > 0 {
			prefs := agent.Preferences(tg.uri)
			if p, out := d.optedOut(prefs); out {
				line := p.From[0]
				e = &DisallowedError{URL: tg.url.Redacted(), Token: refusedFor(agent.Token(), tokens), Label: p.Label, Preference: &line, Preferences: &prefs}
				break
			}
		}
		d.stats.allowed.Add(1)
		return agent, nil
	}
	d.stats.refused.Add(1)
	switch {
	case e.Rule != nil:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "rule", e.Rule.Directive(), "line", e.Rule.Line)
	case e.Preference != nil:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "label", e.Label, "preference", e.Preference.Directive(), "source", e.Preference.Source.String(), "line", e.Preference.Line)
	default:
		d.logger.Info("robots: request refused", "url", e.URL, "token", e.Token, "reason", "robots.txt unreachable", "retryAt", e.RetryAt)
	}
	return agent, e
}

// optedOut returns the preference of the first purpose the crawler
// declared (Options.Purposes) when the site's preference in prefs is "n"
// for every one of them, and reports whether it is.
func (d *decider) optedOut(prefs policy.Preferences) (policy.Preference, bool) {
	for _, label := range d.purposes {
		if prefs.Label(label).Usage != policy.UsageDisallowed {
			return policy.Preference{}, false
		}
	}
	return prefs.Label(d.purposes[0]), true
}

// refusedFor names the product token a refusal speaks for: the one whose
// groups applied, or the crawler's own when only the * groups did.
func refusedFor(token string, tokens []string) string {
	if token == "" || token == "*" {
		return primaryToken(tokens)
	}
	return token
}

// tokensFor returns the product tokens tg is decided for: the crawler's
// own, or, when Options names none, the product token of the request's
// own User-Agent (as Scrapy does), appended to buf.
func (d *decider) tokensFor(tg *wireTarget, buf []string) []string {
	if len(d.tokens) > 0 {
		return d.tokens
	}
	if tok := policy.ProductToken(tg.header.Get("User-Agent")); tok != "" {
		return append(buf, tok)
	}
	return nil
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

// agent returns the groups that tokens are held to under s at now, after
// being the time an unreachable origin falls back after (none when every
// request is allowed), or refuse when every request is refused.
func (s *state) agent(now time.Time, after time.Duration, tokens []string) (agent policy.Agent, refuse bool) {
	rules := s.rules(now, after)
	return rules.robots.Agent(tokens...), rules.refuse
}

// primaryToken is the most specific of tokens, or "*" without one.
func primaryToken(tokens []string) string {
	if len(tokens) > 0 {
		return tokens[0]
	}
	return "*"
}
