package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gregjones/httpcache"
	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"
)

// robotsCache is what a transport knows of each origin's robots.txt and
// when to renew it: the origins held in memory, bounded in count and in
// the bytes their parsed robots.txt take (otter's W-TinyLFU forgets the
// least useful first), each with its state (record.go), and one renewal
// per origin at a time, which takes the fleet's lease, loads the newest
// stored record, fetches when that is due and saves the result merged
// with what other writers stored (store.go). A body is parsed once, by
// the renewal: the one the record it comes to keeps, unless the state
// already holds it parsed. A forgotten origin's record
// stays in the store. The decider (decider.go) decides requests under the
// state the cache gives. It is safe for concurrent use.
type robotsCache struct {
	table   *otter.Cache[originID, *origin]
	flight  singleflight.Group // one renewal per origin, keyed by its store key
	store   store
	fetcher *fetcher
	times   lifetimes
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
	logger  *slog.Logger
	stats   *counters
	// pausedUntil returns the end of o's Retry-After pause as of now, the
	// fleet's included (the transport sets the pacer's, pacer.paused; none
	// until then): no robots.txt is fetched before it.
	pausedUntil func(ctx context.Context, o *origin, now time.Time) time.Time
	// outages holds, for each origin whose robots.txt was last found
	// unreachable, when it is to be fetched again and after how many
	// failures, kept while that time is to come however many origins
	// the table and the store forget meanwhile (up to 16 x MaxOrigins
	// origins unreachable at once, the table's bound): forgetting an
	// origin never brings its next fetch forward nor ends its back-off.
	outages table[*outage]
}

// outage is what an origin's last unreachable record says of its next
// fetch (nil once the origin is reachable). It is safe for concurrent use.
type outage struct{ last atomic.Pointer[failure] }

// failure is the part of an unreachable record an outage keeps: small,
// since a crawl may meet many unreachable origins at once.
type failure struct {
	since, fetchedAt, retryAt time.Time
	failures, status          int
	err                       string
	good                      bool // the record kept a last good copy
}

// busy reports whether the outage still holds a fetch back at now.
func (u *outage) busy(now time.Time) bool {
	f := u.last.Load()
	return f != nil && f.retryAt.After(now)
}

// init readies c to hold cfg.maxOrigins origins weighing at most
// cfg.maxRobotsBytes, their records kept in fleet, or in cache without
// one, and fetched on base.
func (c *robotsCache) init(cfg *config, cache httpcache.Cache, fleet Fleet, base http.RoundTripper, now func() time.Time, sleep func(context.Context, time.Duration) error, stats *counters) {
	c.now, c.sleep, c.logger, c.stats = now, sleep, cfg.logger, stats
	c.pausedUntil = func(context.Context, *origin, time.Time) time.Time { return time.Time{} }
	c.times = lifetimes{fresh: cfg.freshness, minFresh: cfg.minFreshness, minBackoff: cfg.minBackoff, maxBackoff: cfg.maxBackoff}
	c.store.init(cache, fleet, cfg.userAgent, cfg.maxSize, cfg.logger, cfg.fetchTimeout, now, sleep)
	c.fetcher = &fetcher{
		base: base, userAgent: cfg.userAgent, maxRedirects: cfg.maxRedirects, maxSize: cfg.maxSize,
		timeout: cfg.fetchTimeout, now: now, logger: cfg.logger,
		pausedUntil: func(context.Context, *url.URL, time.Time) time.Time { return time.Time{} },
	}
	c.outages.init(4*cfg.maxOrigins, now, func(OriginKey) *outage { return new(outage) })
	c.table = otter.Must(&otter.Options[originID, *origin]{
		MaximumWeight: uint64(cfg.maxRobotsBytes),
		Weigher: countingWeigher(cfg.maxRobotsBytes, cfg.maxOrigins, func(_ originID, o *origin) int64 {
			return o.weight()
		}),
	})
}

// origin is what a transport holds in memory for one origin: its robots
// state and a pointer to its waiting line, which the pacer owns.
// It is safe for concurrent use.
type origin struct {
	id originID
	// key names the origin in the store and in the pacer's table (see
	// originID.key).
	key OriginKey
	// robotsURL is where the origin's robots.txt is fetched, and
	// robotsHost the Host header to send ("" for the URL's own).
	robotsURL  *url.URL
	robotsHost string

	// st is read on every request and written only after a renewal, so
	// it is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// line is the origin's line in the pacer's table, nil until the
	// first request looks it up.
	line atomic.Pointer[line]

	// price is the last price in millionths the origin asked (a 402),
	// 0 while it asked none: its requests then offer one up front.
	// payFailures counts its pay-per-crawl InternalErrors in a row.
	price       atomic.Int64
	payFailures atomic.Int32

	// deferred is what a first robots.txt fetch that a redirect into a
	// paused origin stopped short waits out (nil: none), which NextFree
	// answers while no state is held.
	deferred atomic.Pointer[deferral]
}

// deferral is a first robots.txt fetch waiting out the pause of the
// origin its redirect leads to: until then, as last known, at by.
type deferral struct {
	until time.Time
	by    *url.URL
}

// current returns the origin's state, or nil before the first renewal.
func (o *origin) current() *state { return o.st.Load() }

// charges reports whether the origin asked a price before, so that its
// requests offer one up front.
func (o *origin) charges() bool { return o.price.Load() != 0 }

// originFor returns the origin id names, adding it if it is not held.
func (c *robotsCache) originFor(id originID) *origin {
	if o, ok := c.table.GetIfPresent(id); ok {
		return o
	}
	u, host := id.robotsURL()
	o, _ := c.table.SetIfAbsent(id, &origin{id: id, key: id.key(), robotsURL: u, robotsHost: host})
	return o
}

// len returns the number of origins held.
func (c *robotsCache) len() int {
	c.table.CleanUp()
	return c.table.EstimatedSize()
}

// unreachable returns how many origins held have a robots.txt that is
// unreachable now.
func (c *robotsCache) unreachable() int {
	n := 0
	for o := range c.table.Values() {
		if st := o.current(); st != nil && st.rec.Outcome == Unreachable {
			n++
		}
	}
	return n
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
	ch := c.flight.DoChan(string(o.key), func() (any, error) {
		growStack()
		return c.renew(detached, o), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*state), c.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// growStack grows the stack of the goroutine it runs on to 8 KiB in one
// growth, made while the stack holds two or three frames. A goroutine's
// stack starts at 2 KiB, and a renewal (a store read, a fetch, a parse)
// grew its goroutine's twice, each time deep in the renewal, copying the
// stack and adjusting every frame on it (bench/README.md has the counts).
//
//go:noinline
func growStack() byte {
	var frame [growFrame]byte
	return frame[frameIndex]
}

// growFrame is the frame that makes growStack grow a new goroutine's
// stack to 8 KiB, which a renewal fits in, on an in-memory base or on
// net/http's Transport; reading frame at a variable index keeps the frame
// from being optimised away.
const growFrame = 5 << 10

var frameIndex = growFrame - 1

// renew brings o's state up to date (see refresh), makes the result o's
// state and weighs o again, unless the renewal before it did. A panic
// refresh contained leaves the origin unreachable, from the last record
// the renewal came to.
func (c *robotsCache) renew(ctx context.Context, o *origin) *state {
	prev := o.current()
	base, st, fetched, panicked := c.refresh(ctx, o, prev)
	switch {
	case panicked != nil:
		res := unreachable("", panicked)
		st, fetched = newState(recordAfter(base, res, c.now(), c.times), res.err, prev.parsed()), nil
	case st == prev:
		return prev
	}
	return c.keep(o, st, fetched)
}

// refresh renews o's state from prev's, in five steps: load the newest
// record stored (another transport sharing the store may have fetched
// it), take the fleet's fetch lease (or wait for the record of the
// process holding it), fetch, save what the fetch leads to, and parse
// the body the record it comes to keeps, unless that body is one already
// parsed. It returns prev when the renewal before it brought it up to
// date, and fetched, the fetch it made if any. The store, the fetcher
// and the logger contain their plug-ins' panics; refresh contains the
// rest, which singleflight would re-raise in a goroutine of its own,
// killing the process, and returns it as panicked, base then the last
// record it came to.
func (c *robotsCache) refresh(ctx context.Context, o *origin, prev *state) (base *record, st *state, fetched *fetchResult, panicked error) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("robots: panic renewing robots.txt", "origin", o.key, "panic", p, "stack", string(debug.Stack()))
			panicked = fmt.Errorf("robots: panic: %v", p)
		}
	}()
	base = recordOf(prev)
	now := c.now()
	if base != nil && !base.due(now) {
		// The renewal before this one brought it up to date.
		return base, prev, nil, nil
	}
	base = c.newest(ctx, o, base, now)
	var res fetchResult
	due := base == nil || base.due(now)
	// No request goes to an origin during a Retry-After pause, its
	// robots.txt's included: the copy held answers, due as it is, until
	// a renewal after the pause (an unreachable one's retry time moved to
	// its end); with none, the fetch waits for the pause to end, asked
	// again as it may have grown (the renewal's context is detached, so
	// the sleep ends with it).
	if due {
		if base == nil {
			now = c.waitPause(ctx, o, now)
		} else if until := c.pausedUntil(ctx, o, now); until.After(now) {
			base, st = heldThrough(base, prev, until, false)
			return base, st, nil, nil
		}
		// Lease: one fetch per origin across the fleet; while another
		// process holds the lease, its record is waited for.
		lease, theirs := c.store.lease(ctx, o.key, now)
		if lease == leaseHeld {
			defer c.store.unlease(ctx, o.key)
		}
		if theirs != nil {
			base = &theirs.rec
		} else {
			// Fetch, and save what the fetch leads to, merged with what
			// other writers stored meanwhile.
			v := validatorsOf(base)
			began := c.now()
			res = c.fetcher.fetch(ctx, o.robotsURL, o.robotsHost, v)
			// A redirect into another origin's pause stops the fetch
			// short. A first one lets the lease go, waits for that pause
			// to end, and for its own origin's, and starts again, so that
			// the fleet still fetches once; a copy held answers through
			// it, fetched again only then.
			if base == nil && !res.deferred.IsZero() {
				if lease == leaseHeld {
					c.store.unlease(ctx, o.key)
				}
				o.deferred.Store(&deferral{until: res.deferred, by: res.deferredBy})
				c.sleep(ctx, res.deferred.Sub(c.now()))
				c.waitPause(ctx, o, c.now())
				return c.refresh(ctx, o, prev)
			}
			if !res.deferred.IsZero() {
				base, st = heldThrough(base, prev, res.deferred, true)
				return base, st, nil, nil
			}
			res.took = c.now().Sub(began)
			saved := c.save(ctx, o.key, recordAfter(base, res, c.now(), c.times))
			base, fetched = &saved, &res
		}
	}
	// Parse the body kept, once, unless it is the one the state already
	// holds parsed.
	return base, newState(*base, res.err, parsedOf(base, prev.parsed())), fetched, nil
}

// waitPause sleeps while o is in a Retry-After pause as of now, asking it
// again as each end comes, since it may have grown, and returns the time
// then.
func (c *robotsCache) waitPause(ctx context.Context, o *origin, now time.Time) time.Time {
	for until := c.pausedUntil(ctx, o, now); until.After(now); until = c.pausedUntil(ctx, o, now) {
		c.sleep(ctx, until.Sub(now))
		now = c.now()
	}
	return now
}

// heldThrough returns the state base, the copy held, comes to through a
// pause until until, during which no fetch is made: prev when it is
// prev's, and an unreachable copy's retry time moved to the pause's end.
// A copy held through a redirect's pause (deferred) is fresh until its
// end, too: asked again before, it would be fetched again, up to the
// redirect, at every question.
func heldThrough(base *record, prev *state, until time.Time, deferred bool) (*record, *state) {
	mine := prev != nil && base == &prev.rec
	if base.Outcome == Unreachable && base.RetryAt.Before(until) || deferred && base.Outcome != Unreachable && base.Expires.Before(until) {
		held := *base
		if held.Outcome == Unreachable {
			held.RetryAt = until
		} else {
			held.Expires = until
		}
		var err error
		if mine {
			err = prev.err
		}
		return &held, newState(held, err, parsedOf(&held, prev.parsed()))
	}
	if mine {
		return base, prev
	}
	return base, newState(*base, nil, parsedOf(base, prev.parsed()))
}

// save stores rec, what a fetch led to, as origin's record, merged with
// what another transport stored meanwhile, and returns the merged
// record, which may keep the other writer's body instead of rec's.
func (c *robotsCache) save(ctx context.Context, origin OriginKey, rec record) record {
	key, ok := c.store.saveKey(ctx, origin, rec)
	saved := rec
	for try := 0; ok && try < swapTries; try++ {
		old := c.store.get(ctx, key)
		if old.newer {
			return rec
		}
		if saved = rec; old.ok {
			saved = merge(old.rec, rec)
		}
		ok = !c.store.put(ctx, key, old, saved)
	}
	return saved
}

// keep makes st o's state and weighs o again; fetched, when the renewal
// fetched, is counted and logged with the record it led to.
func (c *robotsCache) keep(o *origin, st *state, fetched *fetchResult) *state {
	if fetched != nil {
		c.stats.fetched(*fetched)
		c.logFetch(o, *fetched, &st.rec)
	}
	o.st.Store(st)
	if r := &st.rec; r.Outcome == Unreachable {
		c.outages.get(o.key).last.Store(&failure{since: r.Since, fetchedAt: r.FetchedAt, retryAt: r.RetryAt, failures: r.Failures, status: r.Status, err: r.Err, good: r.Good != nil})
	} else if u, ok := c.outages.peek(o.key); ok {
		u.last.Store(nil)
	}
	if cur, ok := c.table.GetIfPresent(o.id); ok && cur == o {
		c.table.Set(o.id, o)
	}
	return st
}

// outageOf returns, for an origin neither held nor stored, the record of
// its last outage kept in c.outages, if any: unreachable since the outage
// began, until its RetryAt, after as many failures, so that a fetch past
// it doubles the back-off and 30 days of outage fall back to allowing
// everything. An outage whose last good copy was forgotten with the
// origin counts its 30 days from now instead.
func (c *robotsCache) outageOf(key OriginKey, now time.Time) *record {
	u, ok := c.outages.peek(key)
	if !ok {
		return nil
	}
	f := u.last.Load()
	if f == nil {
		return nil
	}
	since := f.since
	if f.good {
		// Its last good copy is forgotten: the 30 days that would fall
		// back to it count again, rather than fall back to nothing.
		since = now
	}
	return &record{Outcome: Unreachable, Status: f.status, FetchedAt: f.fetchedAt, Since: since, RetryAt: f.retryAt, Failures: f.failures, Err: f.err}
}

// newest returns the newest record of o as a renewal reads it first:
// base, the one held (nil for none), or the one stored when it was
// fetched later (another transport sharing the store, or member of the
// fleet, may have fetched since), or with neither the last outage kept.
func (c *robotsCache) newest(ctx context.Context, o *origin, base *record, now time.Time) *record {
	if stored, ok := c.store.load(ctx, o.key, false); ok && (base == nil || stored.rec.FetchedAt.After(base.FetchedAt)) {
		base = &stored.rec
	}
	if base == nil {
		base = c.outageOf(o.key, now)
	}
	return base
}

// newestState returns the state a request to o sent at now would be
// decided and paced on, without a fetch: the one held, or, when that is
// due or missing, the one the newest record makes (see newest; the store
// read only when read is true), its body parsed unless the held state
// has it, and kept by none; nil for none. So an outage or a Crawl-delay
// another member met counts as the request will count it.
func (c *robotsCache) newestState(ctx context.Context, o *origin, now time.Time, read bool) *state {
	cur := o.current()
	rec := recordOf(cur)
	if rec != nil && !rec.due(now) {
		return cur
	}
	if read {
		rec = c.newest(ctx, o, rec, now)
	} else if rec == nil {
		rec = c.outageOf(o.key, now)
	}
	switch {
	case rec == nil:
		return nil
	case cur != nil && rec == &cur.rec:
		return cur
	}
	return newState(*rec, nil, parsedOf(rec, cur.parsed()))
}

// logFetch logs one robots.txt fetch of o, which led to rec.
func (c *robotsCache) logFetch(o *origin, res fetchResult, rec *record) {
	// Every new origin comes here: without a Logger that wants it, the
	// record of the fetch is not even built.
	if !c.logger.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
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

// recordOf returns st's record, nil for no state.
func recordOf(st *state) *record {
	if st == nil {
		return nil
	}
	return &st.rec
}
