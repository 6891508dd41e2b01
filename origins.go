package robots

import (
	"context"
	"time"

	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"
)

// originTable holds the origins in memory, bounded both in count and in
// the bytes their parsed robots.txt take, forgetting the least useful
// first (otter's W-TinyLFU), and keeps their robots state current: one
// refresh per origin at a time, by the refresher. A forgotten origin's
// record stays in the store. It is safe for concurrent use.
type originTable struct {
	cache     *otter.Cache[originID, *origin]
	refresher *refresher
	flight    singleflight.Group
	now       func() time.Time
}

// init makes a table of at most maxOrigins origins weighing at most
// maxBytes, whose states r refreshes.
func (tb *originTable) init(maxOrigins int, maxBytes int64, r *refresher, now func() time.Time) {
	tb.refresher, tb.now = r, now
	tb.cache = otter.Must(&otter.Options[originID, *origin]{
		MaximumWeight: uint64(maxBytes),
		Weigher: countingWeigher(maxBytes, maxOrigins, func(_ originID, o *origin) int64 {
			if st := o.current(); st != nil {
				return st.weight()
			}
			return stateOverhead
		}),
	})
}

// lookupTarget returns the origin whose robots.txt decides tg, creating
// it if needed.
func (tb *originTable) lookupTarget(tg *target) *origin {
	if o, ok := tb.cache.GetIfPresent(tg.id); ok {
		return o
	}
	return tb.add(tg.id)
}

// add inserts a new origin under id unless another goroutine did first.
func (tb *originTable) add(id originID) *origin {
	o, _ := tb.cache.SetIfAbsent(id, &origin{id: id, key: id.key()})
	return o
}

// state returns o's robots state, refreshed when it is not held or is
// due. Concurrent callers share one refresh. It runs detached from ctx,
// under the fetcher's own timeout, so a caller whose context ends returns
// at once with ctx.Err() while the refresh goes on for the others.
//
// now is the time of the caller's request; state returns it, or the time
// after the refresh when it had to wait for one.
func (tb *originTable) state(ctx context.Context, o *origin, now time.Time) (*state, time.Time, error) {
	if st := o.current(); st != nil && !st.rec.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := tb.flight.DoChan(o.key, func() (any, error) { return tb.refresh(detached, o), nil })
	select {
	case res := <-ch:
		return res.Val.(*state), tb.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// refresh has the refresher renew o's state, makes the result o's state
// and weighs o again.
func (tb *originTable) refresh(ctx context.Context, o *origin) *state {
	prev := o.current()
	st := tb.refresher.refresh(ctx, o.key, prev)
	if st != prev {
		o.st.Store(st)
		if cur, ok := tb.cache.GetIfPresent(o.id); ok && cur == o {
			tb.cache.Set(o.id, o)
		}
	}
	return st
}

// len returns the number of origins held.
func (tb *originTable) len() int {
	tb.cache.CleanUp()
	return tb.cache.EstimatedSize()
}
