package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/crawlkit/robots/policy"
)

// verdict decides u, whose target is tg, for tokens on o's robots state
// as of now, fetching the robots.txt first when it is not held or is due
// (see Transport.state). It returns the state decided on, the time of the
// decision, and the groups that allowed u, or the error refusing it.
func (t *Transport) verdict(ctx context.Context, o *origin, u *url.URL, tg *target, tokens []string, now time.Time) (*state, time.Time, policy.Agent, error) {
	st, now, err := t.state(ctx, o, now)
	if err != nil {
		return nil, now, policy.Agent{}, err
	}
	agent, err := t.decide(st, u, tg, tokens, now)
	return st, now, agent, err
}

// state returns o's robots state, fetching the robots.txt when it is not
// held or is due. Concurrent callers share one fetch. The fetch runs
// detached from ctx, under its own timeout, so a caller whose context ends
// returns at once with ctx.Err() while the fetch goes on for the others.
//
// now is the time of the caller's request; state returns it, or the time
// after the fetch when it had to wait for one.
func (t *Transport) state(ctx context.Context, o *origin, now time.Time) (*state, time.Time, error) {
	if st := o.current(); st != nil && !st.rec.due(now) {
		return st, now, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	detached := context.WithoutCancel(ctx)
	ch := t.flight.DoChan(o.key, func() (any, error) { return t.refresh(detached, o), nil })
	select {
	case r := <-ch:
		return r.Val.(*state), t.cfg.now(), nil
	case <-ctx.Done():
		return nil, now, ctx.Err()
	}
}

// refresh brings o's state up to date: from the store when another
// transport sharing it has fetched, after another process's fetch when it
// holds the fleet's lease, or else by fetching the robots.txt itself.
func (t *Transport) refresh(ctx context.Context, o *origin) (st *state) {
	prev := o.current()
	defer func() {
		// The store, the fetcher and the logger recover their plug-ins'
		// panics; this catches the rest, which singleflight would
		// re-raise in a goroutine of its own, killing the process.
		if p := recover(); p != nil {
			safeLog(t.cfg.logger, slog.LevelError, "robots: panic refreshing robots.txt", "origin", o.key, "panic", p, "stack", string(debug.Stack()))
			res := fetchResult{outcome: Unreachable, maxAge: -1, err: fmt.Errorf("robots: panic: %v", p)}
			st = newState(next(recordOf(prev), res, t.cfg.now(), t.fresh), res.err, prev)
			o.st.Store(st)
		}
	}()
	now := t.cfg.now()
	if prev == nil || prev.rec.due(now) {
		if rec, ok := t.store.load(o.key); ok && (prev == nil || rec.FetchedAt.After(prev.rec.FetchedAt)) {
			prev = newState(rec, nil, prev)
		}
	}
	// A fresh state, held or just loaded, is kept; else another process
	// may be fetching it: wait for its record, or take the fleet's lease
	// and fetch.
	st = prev
	var res fetchResult
	fetched := false
	if prev == nil || prev.rec.due(now) {
		leaseTTL := 2 * t.cfg.fetchTimeout
		held, fetch := t.store.lease(ctx, o.key, leaseTTL)
		var rec record
		ok := false
		if !fetch {
			deadline := now.Add(t.cfg.fetchTimeout)
			var h bool
			if rec, h, ok = t.store.awaitOther(ctx, o.key, t.cfg.now, t.cfg.sleep, deadline, leaseTTL); !ok {
				held = h
			}
		}
		if !ok && held {
			defer t.store.unlease(ctx, o.key)
			// The last holder may have saved and let go between our load and
			// our lease: its record saves a second fetch.
			if r, loaded := t.store.load(o.key); loaded && !r.due(t.cfg.now()) {
				rec, ok = r, true
			}
		}
		if !ok {
			robotsURL, host := o.robotsURL()
			res = t.fetcher.fetch(ctx, robotsURL, host, validatorsOf(prev))
			rec = next(recordOf(prev), res, t.cfg.now(), t.fresh)
			rec = t.store.save(ctx, o.key, rec)
			fetched = true
		}
		st = newState(rec, res.err, prev)
	}
	t.origins.set(o, st)
	if fetched {
		t.stats.fetched(res)
		t.logFetch(o.key, res, st)
	}
	return st
}
