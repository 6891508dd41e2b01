package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrUnavailable is wrapped by every error a Store returns: Redis failed,
// timed out, or failed less than Options.Cooldown ago. The transport takes
// it as "use your own state for this request", never as a robots.txt
// outcome.
var ErrUnavailable = errors.New("redisstore: Redis unavailable")

// Stats counts what a Store did since it was made.
type Stats struct {
	// Calls is how many calls the Store was given (Get, Set, Delete and
	// the fleet capabilities).
	Calls int64
	// Errors is how many calls Redis failed or did not answer within
	// Options.Timeout.
	Errors int64
	// Fallbacks is how many calls were answered without Redis: the ones
	// that failed and the ones skipped during a Cooldown. Each is a
	// request for which the transport used its own state.
	Fallbacks int64
}

// Stats returns the counts so far.
func (s *Store) Stats() Stats {
	return Stats{
		Calls:     s.health.calls.Load(),
		Errors:    s.health.errors.Load(),
		Fallbacks: s.health.fallbacks.Load(),
	}
}

// health bounds every call, keeps the cooldown after a failure, counts,
// and logs failures and recoveries at a limited rate.
type health struct {
	cooldown, logInterval time.Duration
	logger                *slog.Logger

	calls, errors, fallbacks atomic.Int64
	// retryAt is when Redis may be tried again after a failure, in Unix
	// nanoseconds of the real clock (Redis's health is not on the
	// transport's clock).
	retryAt atomic.Int64
	// down reports whether a call failed with no success since; it keeps
	// the lock off the path of a healthy call.
	down atomic.Bool

	// mu protects the fields below.
	mu sync.Mutex
	// failed counts failures since the last log line about them.
	failed                         int64
	lastFailureLog, lastRecoverLog time.Time
}

func (h *health) init(cooldown, logInterval time.Duration, logger *slog.Logger) {
	h.cooldown, h.logInterval, h.logger = cooldown, logInterval, logger
}

// call runs f, which talks to Redis, bounded by s.timeout: a call that
// outlives it is abandoned (it ends in the background within the client's
// own timeouts; its result, sent on a buffered channel, is dropped) and
// counts as a failure. A panic in f is a failure too.
func call[T any](ctx context.Context, s *Store, op string, f func(context.Context) (T, error)) (T, error) {
	var zero T
	h := &s.health
	h.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if at := h.retryAt.Load(); at != 0 && time.Now().UnixNano() < at {
		h.fallbacks.Add(1)
		return zero, fmt.Errorf("%w: %s: waiting %v after a failure", ErrUnavailable, op, h.cooldown)
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	type result struct {
		val T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		v, err := f(cctx)
		done <- result{v, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-cctx.Done():
		r.err = cctx.Err()
	}
	if r.err == nil {
		h.succeeded()
		return r.val, nil
	}
	if ctx.Err() != nil {
		// The caller gave up: that says nothing about Redis.
		return zero, ctx.Err()
	}
	h.failedCall(op, r.err)
	return zero, fmt.Errorf("%w: %s: %w", ErrUnavailable, op, r.err)
}

func (h *health) failedCall(op string, err error) {
	h.errors.Add(1)
	h.fallbacks.Add(1)
	now := time.Now()
	if h.cooldown > 0 {
		h.retryAt.Store(now.Add(h.cooldown).UnixNano())
	}
	h.down.Store(true)
	h.mu.Lock()
	h.failed++
	if now.Sub(h.lastFailureLog) < h.logInterval {
		h.mu.Unlock()
		return
	}
	failed := h.failed
	h.failed = 0
	h.lastFailureLog = now
	h.mu.Unlock()
	h.logger.Warn("redisstore: Redis unavailable, using local robots state",
		"op", op, "err", err, "failed_calls", failed)
}

func (h *health) succeeded() {
	if !h.down.Load() {
		return
	}
	now := time.Now()
	h.mu.Lock()
	if !h.down.Load() {
		h.mu.Unlock()
		return
	}
	h.down.Store(false)
	h.retryAt.Store(0)
	if now.Sub(h.lastRecoverLog) < h.logInterval {
		h.mu.Unlock()
		return
	}
	h.lastRecoverLog = now
	failed := h.failed
	h.failed = 0
	h.mu.Unlock()
	h.logger.Info("redisstore: Redis available again", "failed_calls", failed)
}
