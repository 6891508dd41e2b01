package robots

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gregjones/httpcache"
)

// countedFleet is a FleetStore that counts the errors of the one it
// wraps, as Stats.StoreErrors, so that every call the transport makes,
// from the robots cache or the pacer, is counted in one place. An error
// of a call whose context had ended is the caller's, not the store's,
// and is not counted.
type countedFleet struct {
	FleetStore
	errors *atomic.Int64
}

// fleetOf returns cache as a FleetStore that counts its errors into
// errs, or nil when cache is not shared by a fleet. It is the one place
// the transport asks what the cache can do: the robots cache and the
// pacer are given its answer.
func fleetOf(cache httpcache.Cache, errs *atomic.Int64) FleetStore {
	if f, ok := cache.(FleetStore); ok {
		return countedFleet{FleetStore: f, errors: errs}
	}
	return nil
}

func (c countedFleet) count(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		c.errors.Add(1)
	}
}

func (c countedFleet) Load(ctx context.Context, key RecordKey) ([]byte, bool, error) {
	v, found, err := c.FleetStore.Load(ctx, key)
	c.count(ctx, err)
	return v, found, err
}

func (c countedFleet) Swap(ctx context.Context, key RecordKey, old, new []byte) (bool, error) {
	ok, err := c.FleetStore.Swap(ctx, key, old, new)
	c.count(ctx, err)
	return ok, err
}

func (c countedFleet) Lease(ctx context.Context, origin OriginKey, token string, ttl time.Duration) (bool, error) {
	held, err := c.FleetStore.Lease(ctx, origin, token, ttl)
	c.count(ctx, err)
	return held, err
}

func (c countedFleet) Unlease(ctx context.Context, origin OriginKey, token string) error {
	err := c.FleetStore.Unlease(ctx, origin, token)
	c.count(ctx, err)
	return err
}

func (c countedFleet) ReserveSlot(ctx context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	slot, err := c.FleetStore.ReserveSlot(ctx, origin, req)
	c.count(ctx, err)
	return slot, err
}

func (c countedFleet) CancelSlot(ctx context.Context, origin OriginKey, at time.Time, interval time.Duration) error {
	err := c.FleetStore.CancelSlot(ctx, origin, at, interval)
	c.count(ctx, err)
	return err
}

func (c countedFleet) Pause(ctx context.Context, origin OriginKey, until time.Time) error {
	err := c.FleetStore.Pause(ctx, origin, until)
	c.count(ctx, err)
	return err
}

func (c countedFleet) NextSlot(ctx context.Context, origin OriginKey, req SlotRequest) (time.Time, error) {
	at, err := c.FleetStore.NextSlot(ctx, origin, req)
	c.count(ctx, err)
	return at, err
}
