package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gregjones/httpcache"
	"golang.org/x/sync/singleflight"
)

// refresher keeps the robots state of the origins in memory up to date:
// from the store when another transport sharing it has fetched, after
// another process's fetch when it holds the fleet's lease, or else by
// fetching the robots.txt itself, one fetch per origin at a time. It is
// safe for concurrent use.
type refresher struct {
	store   *store
	fetcher *fetcher
	origins *originTable
	fresh   freshness
	flight  singleflight.Group
	now     func() time.Time
	logger  *slog.Logger
	stats   *counters
}

// init readies r to keep records in cache and fetch them on base.
func (r *refresher) init(c *config, cache httpcache.Cache, base http.RoundTripper, origins *originTable, now func() time.Time, sleep func(context.Context, time.Duration) error, stats *counters) {
	r.store = newStore(cache, c.userAgent, c.logger, c.fetchTimeout, now, sleep)
	r.fetcher = &fetcher{
		base: base, userAgent: c.userAgent, maxRedirects: c.maxRedirects, maxSize: c.maxSize,
		timeout: c.fetchTimeout, now: c.now, logger: c.logger,
	}
	r.origins = origins
	r.fresh = freshness{freshness: c.freshness, minFreshness: c.minFreshness, minBackoff: c.minBackoff, maxBackoff: c.maxBackoff}
	r.now, r.logger, r.stats = now, c.logger, stats
}

// state returns o's robots state, fetching the robots.txt when it is not
// held or is due. Concurrent callers share one fetch. The fetch runs
// detached from ctx, under its own timeout, so a caller whose context ends
// returns at once with ctx.Err() while the fetch goes on for the others.
//
// now is the time of the caller's request; state returns it, or the time
// after the fetch when it had to wait for one.
func (r *refresher) state(ctx context.Context, o *origin, now time.Time) (*state, time.Time, error) {
	if st := o.current(); st != nil && !st.rec.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := r.flight.DoChan(o.key, func() (any, error) { return r.refresh(detached, o), nil })
	select {
	case res := <-ch:
		return res.Val.(*state), r.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// refresh brings o's state up to date from the newest record held or
// stored, through the store, which fetches it again only when it is due.
func (r *refresher) refresh(ctx context.Context, o *origin) (st *state) {
	prev := o.current()
	base := recordOf(prev)
	defer func() {
		// The store, the fetcher and the logger recover their plug-ins'
		// panics; this catches the rest, which singleflight would
		// re-raise in a goroutine of its own, killing the process.
		if p := recover(); p != nil {
			r.logger.Error("robots: panic refreshing robots.txt", "origin", o.key, "panic", p, "stack", string(debug.Stack()))
			res := fetchResult{outcome: Unreachable, maxAge: -1, err: fmt.Errorf("robots: panic: %v", p)}
			rec := next(base, res, r.now(), r.fresh)
			st = newState(rec, res.err, prev)
			r.origins.set(o, st)
		}
	}()
	now := r.now()
	if base != nil && !base.due(now) {
		// The flight before this one brought it up to date.
		return prev
	}
	// Another transport sharing the store may have fetched since.
	if rec, ok := r.store.load(o.key); ok && (base == nil || rec.FetchedAt.After(base.FetchedAt)) {
		base = &rec
	}
	var res fetchResult
	rec, fetched := r.store.renew(ctx, o.key, base, now, func() record {
		res = r.fetcher.fetch(ctx, o.key, validatorsOf(base))
		return next(base, res, r.now(), r.fresh)
	})
	st = newState(rec, res.err, prev)
	r.origins.set(o, st)
	if fetched {
		r.stats.fetched(res)
		logFetch(r.logger, o.key, res, &st.rec)
	}
	return st
}
