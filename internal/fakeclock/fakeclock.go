// Package fakeclock is an injectable clock for tests: its Sleep advances
// the time at once instead of waiting, so a test can cross a crawl delay,
// 24 hours or 30 days instantly.
package fakeclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a manual clock. It is safe for concurrent use.
type Clock struct {
	// mu protects now and waits.
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

// New returns a Clock set to a fixed instant, so that tests are repeatable.
func New() *Clock {
	return &Clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sleep advances the clock by d and records the wait, returning at once;
// it returns ctx.Err() without advancing when ctx is already done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return nil
}

// Waits returns every duration Sleep was asked for, in order.
func (c *Clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}
