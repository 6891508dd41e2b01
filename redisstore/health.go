package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
)

// ErrUnavailable is wrapped by every error a Store returns: Redis failed,
// timed out, or failed less than Options.Cooldown ago (that error, a call
// not tried, wraps robots.ErrStoreSkipped as well). The transport takes it
// as "use your own state for this request", never as a robots.txt
// outcome.
var ErrUnavailable = errors.New("redisstore: Redis unavailable")

// Stats counts what a Store did since it was made.
type Stats struct {
	// Calls is how many calls of robots.Fleet's the Store was given.
	Calls int64
	// Errors is how many calls Redis failed or did not answer within
	// Options.Timeout; a call whose caller's context ended first (its
	// cancellation or deadline) is none of them.
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
	// dialErr is the last dial that failed.
	dialErr atomic.Pointer[dialFailure]
	// reload, if set, has the client read where the data lives again (a
	// Cluster's slot map): a failure may be a node that is gone.
	// reloaded is when it last did, in Unix nanoseconds.
	reload   func()
	reloaded atomic.Int64

	// mu protects the fields below.
	mu sync.Mutex
	// failed counts failures since the last log line about them.
	failed                         int64
	lastFailureLog, lastRecoverLog time.Time
}

func (h *health) init(cooldown, logInterval time.Duration, logger *slog.Logger) {
	h.cooldown, h.logInterval, h.logger = cooldown, logInterval, logger
}

// call runs f, which talks to Redis, bounded by s.timeout through its
// context: go-redis stops waiting at the context's deadline when the
// client has ContextTimeoutEnabled (New says so when it has not). A
// panic in f is a failure too. A call that failed on a deadline names
// the cause go-redis last saw dialing, if it failed to dial during the
// call ("connection refused"): go-redis retries a refused dial until the
// deadline and reports only the deadline.
func call[T any](ctx context.Context, s *Store, op string, f func(context.Context) (T, error)) (val T, err error) {
	var zero T
	h := &s.health
	h.calls.Add(1)
	if err := robots.CallerGaveUp(ctx); err != nil {
		return zero, err
	}
	start := time.Now()
	if at := h.retryAt.Load(); at != 0 && start.UnixNano() < at {
		h.fallbacks.Add(1)
		return zero, fmt.Errorf("%w: %s: waiting %v after a failure: %w", ErrUnavailable, op, h.cooldown, robots.StoreFailed(robots.ErrStoreSkipped))
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			val, err = zero, h.failure(ctx, op, fmt.Errorf("panic: %v", p))
		}
	}()
	val, err = f(cctx)
	if err == nil {
		h.succeeded()
		return val, nil
	}
	if d, _ := cctx.Deadline(); !time.Now().Before(d) && !errors.Is(err, context.DeadlineExceeded) {
		// go-redis reports the connection's deadline, the context's, as
		// its own timeout.
		err = fmt.Errorf("%w after %v: %w", context.DeadlineExceeded, s.timeout, err)
	}
	if cause := h.dialCause(start); cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (dialing: %w)", err, cause)
	}
	return zero, h.failure(ctx, op, err)
}

// failure counts and logs err, the failure of a call op, starting the
// cooldown, and returns the error the Store answers; when the caller gave
// up, which says nothing about Redis, it counts and logs nothing and
// returns its context's error.
func (h *health) failure(ctx context.Context, op string, err error) error {
	if err := robots.CallerGaveUp(ctx); err != nil {
		return err
	}
	h.failedCall(op, err)
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, robots.StoreFailed(err))
}

// dialFailure is the last error go-redis met dialing, and when.
type dialFailure struct {
	err error
	at  time.Time
}

// dialCause returns the last dial error met since start, or nil.
func (h *health) dialCause(start time.Time) error {
	if d := h.dialErr.Load(); d != nil && !d.at.Before(start) {
		return d.err
	}
	return nil
}

// dialHook is the go-redis hook that records the Store's dial errors
// into its health, so that a failed call can name them.
type dialHook struct{ h *health }

func (d dialHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			d.h.dialErr.Store(&dialFailure{err: err, at: time.Now()})
		}
		return c, err
	}
}

func (dialHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *health) failedCall(op string, err error) {
	h.errors.Add(1)
	h.fallbacks.Add(1)
	now := time.Now()
	every := h.cooldown
	if every <= 0 {
		every = time.Second
	}
	if last := h.reloaded.Load(); h.reload != nil && now.UnixNano()-last >= int64(every) && h.reloaded.CompareAndSwap(last, now.UnixNano()) {
		// Once a Cooldown: what failed may fail on and on (an overload),
		// and each reload asks the cluster for its slots.
		h.reload()
	}
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
