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
// origin across every process sharing the store, the pauses any of them
// was asked for, and how many of them pace each origin. When
// Options.Cache implements it, each paced request reserves its send time
// there and each unpaced one asks whether the origin is paused; an error
// from any method counts as the store being unavailable for that request,
// which is then paced by the transport alone, its delay multiplied by the
// members it last saw.
type SlotReserver interface {
	// ReserveSlot reserves the earliest send time for key that is no
	// earlier than req.NotBefore (or req.Now), than the last slot
	// reserved by any member plus req.Interval, and than any pause, and
	// counts req.Member as pacing key. If that time is after req.Limit
	// nothing is reserved and the Slot says when it would have been.
	ReserveSlot(ctx context.Context, key string, req SlotRequest) (Slot, error)
	// CancelSlot gives back the slot at (reserved with interval) if it is
	// still the last one.
	CancelSlot(ctx context.Context, key string, at time.Time, interval time.Duration) error
	// Pause holds every later slot of key until at least until
	// (Retry-After).
	Pause(ctx context.Context, key string, until time.Time) error
	// PausedUntil returns the end of the pause any member stored for key;
	// the zero time when there is none.
	PausedUntil(ctx context.Context, key string) (time.Time, error)
}

// SlotRequest is what a paced request asks of a SlotReserver.
type SlotRequest struct {
	// Member names the process reserving (random per transport), so that
	// the store can count the members pacing an origin.
	Member string
	// Now is the reserver's clock.
	Now time.Time
	// NotBefore is the earliest the slot may be: the member's own next
	// slot. If zero or before Now, Now is used.
	NotBefore time.Time
	// Interval is the least time between two slots of the origin.
	Interval time.Duration
	// Limit is the latest slot the request can use. If zero, there is
	// none.
	Limit time.Time
}

// Slot is a SlotReserver's answer to a SlotRequest.
type Slot struct {
	// At is the send time reserved, or the one that would have been when
	// Reserved is false.
	At time.Time
	// Reserved reports whether At was reserved: false when it lay past
	// the request's Limit.
	Reserved bool
	// Members is how many members, the caller included, reserved slots
	// of the origin lately: while the store is unavailable, each member
	// paces the origin at this many times the delay, so that the fleet
	// keeps the origin's pace. Zero when the store does not count.
	Members int
}
