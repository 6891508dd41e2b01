package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gregjones/httpcache"
)

// refresher renews the robots state of one origin at a time: from the
// store when another transport sharing it has fetched, after another
// process's fetch when it holds the fleet's lease, or else by fetching the
// robots.txt itself. It holds no origin; the origin table (origins.go)
// runs one renewal per origin at a time and keeps the result. It is safe
// for concurrent use.
type refresher struct {
	store   *store
	fetcher *fetcher
	fresh   freshness
	now     func() time.Time
	logger  *slog.Logger
	stats   *counters
}

// newRefresher returns a refresher that keeps records in cache and
// fetches them on base.
func newRefresher(c *config, cache httpcache.Cache, base http.RoundTripper, now func() time.Time, sleep func(context.Context, time.Duration) error, stats *counters) *refresher {
	return &refresher{
		store: newStore(cache, c.userAgent, c.logger, c.fetchTimeout, now, sleep),
		fetcher: &fetcher{
			base: base, userAgent: c.userAgent, maxRedirects: c.maxRedirects, maxSize: c.maxSize,
			timeout: c.fetchTimeout, now: now, logger: c.logger,
		},
		fresh:  freshness{freshness: c.freshness, minFreshness: c.minFreshness, minBackoff: c.minBackoff, maxBackoff: c.maxBackoff},
		now:    now,
		logger: c.logger,
		stats:  stats,
	}
}

// refresh returns the state that follows prev for the origin whose key is
// originKey, counting and logging the fetch it took, if any.
func (r *refresher) refresh(ctx context.Context, originKey string, prev *state) *state {
	st, res, fetched := r.renewed(ctx, originKey, prev)
	if fetched {
		r.stats.fetched(res)
		logFetch(r.logger, originKey, res, &st.rec)
	}
	return st
}

// renewed returns the state that follows prev: prev itself when the
// refresh before this one brought it up to date, or one from the newest
// record held or stored, through the store, which fetches it again only
// when it is due. fetched reports a fetch, with res its result.
func (r *refresher) renewed(ctx context.Context, originKey string, prev *state) (st *state, res fetchResult, fetched bool) {
	base := recordOf(prev)
	defer func() {
		// The store, the fetcher and the logger recover their plug-ins'
		// panics; this catches the rest, which the origin table's
		// singleflight would re-raise in a goroutine of its own, killing
		// the process.
		if p := recover(); p != nil {
			r.logger.Error("robots: panic refreshing robots.txt", "origin", originKey, "panic", p, "stack", string(debug.Stack()))
			res = unreachable("", fmt.Errorf("robots: panic: %v", p))
			rec := next(base, res, r.now(), r.fresh)
			st, fetched = unparsedState(rec, res.err, prev), false
		}
	}()
	now := r.now()
	if base != nil && !base.due(now) {
		return prev, res, false
	}
	// Another transport sharing the store may have fetched since.
	if rec, ok := r.store.load(originKey); ok && (base == nil || rec.FetchedAt.After(base.FetchedAt)) {
		base = &rec
	}
	rec, fetched := r.store.renew(ctx, originKey, base, now, func() record {
		res = r.fetcher.fetch(ctx, originKey, validatorsOf(base))
		return next(base, res, r.now(), r.fresh)
	})
	return newState(rec, res.err, prev), res, fetched
}
