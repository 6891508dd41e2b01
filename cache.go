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
			if st := o.current(); st != nil {
				return st.weight()
			}
			return stateOverhead
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
	// Where to fetch is known before anything is asked of the store, so
	// that the renewal reads top-down: cache, store, fetcher.
	robotsURL, host := o.id.robotsURL()
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

// recordOf returns st's record, nil for no state.
func recordOf(st *state) *record {
	if st == nil {
		return nil
	}
	return &st.rec
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
