package robots

import (
	"context"
	"time"
)

// The capabilities below are what a store shared by the processes of a
// crawler fleet adds to an httpcache.Cache: the Transport finds them on
// Options.Cache and uses each one it has.

// Leaser is an optional capability of an Options.Cache shared by several
// processes: a fleet-wide lease on fetching one origin's robots.txt, so
// that the fleet fetches it once. The key is the origin's record key.
type Leaser interface {
	// Lease takes the fetch lease on key for ttl if no one holds it. It
	// reports whether the caller now holds it. token identifies the
	// holder (random per transport).
	Lease(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
	// Unlease gives the lease up if token still holds it.
	Unlease(ctx context.Context, key, token string) error
}

// Swapper is an optional capability of an Options.Cache shared by several
// writers: compare-and-swap of one record, so that concurrent writers
// merge their records instead of overwriting each other's.
type Swapper interface {
	// Swap stores new under key only if the stored value equals old (old
	// nil: only if absent). It reports whether it stored.
	Swap(ctx context.Context, key string, old, new []byte) (bool, error)
}

// SlotReserver is an optional capability of Options.Cache: one pace per
// origin across every process sharing the store. When Options.Cache
// implements it, each paced request reserves its send time there; an
// error from any method counts as the store being unavailable for that
// request, which is then paced by the transport alone.
type SlotReserver interface {
	// ReserveSlot reserves the earliest send time for key that is >= now,
	// >= the last reserved slot + interval, and >= any pause. If that time
	// is after limit (limit zero: no limit) nothing is reserved and ok is
	// false (at still says when it would be).
	ReserveSlot(ctx context.Context, key string, now time.Time, interval time.Duration, limit time.Time) (at time.Time, ok bool, err error)
	// CancelSlot gives back the slot at (reserved with interval) if it is
	// still the last one.
	CancelSlot(ctx context.Context, key string, at time.Time, interval time.Duration) error
	// Pause holds every later slot of key until at least until
	// (Retry-After).
	Pause(ctx context.Context, key string, until time.Time) error
}
