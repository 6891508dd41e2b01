package robots_test

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
)

// TestMemoryFleetConformance runs the Fleet contract's suite against
// MemoryFleet, whose pace is the one a Transport keeps alone.
func TestMemoryFleetConformance(t *testing.T) {
	fleettest.Run(t, func(*testing.T) robots.Fleet { return robots.NewMemoryFleet() })
}

// TestMemoryFleetKeepsAnEpoch checks that MemoryFleet keeps an epoch, as
// redisstore does, rather than none (which the contract allows a store
// that never loses its slots): a fleet tested on it meets the epoch its
// members meet on Redis.
func TestMemoryFleetKeepsAnEpoch(t *testing.T) {
	fleet := robots.NewMemoryFleet()
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	for i, offered := range []string{"e1", "e2", "e3"} {
		slot, err := fleet.ReserveSlot(context.Background(), "https://site.example", robots.SlotRequest{
			Member: "m" + offered, Now: now.Add(time.Duration(i) * time.Hour), Interval: time.Second, Epoch: offered})
		if err != nil || slot.Epoch != "e1" {
			t.Errorf("reservation %d offering %s: epoch %q, %v; want e1, the first offered, kept", i, offered, slot.Epoch, err)
		}
	}
}
