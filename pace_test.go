package robots_test

import (
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
)

// TestMemoryFleetConformance runs the Fleet contract's suite against
// MemoryFleet, whose pace is the one a Transport keeps alone.
func TestMemoryFleetConformance(t *testing.T) {
	fleettest.Run(t, func(*testing.T) robots.Fleet { return robots.NewMemoryFleet() })
}
