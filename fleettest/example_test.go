package fleettest_test

import (
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
)

// A store's test runs the suite in one line, opening a fresh, empty store
// for each case: here the in-memory robots.MemoryFleet. A store on a
// shared server opens each under a key prefix of its own, as redisstore's
// TestFleetConformance does. The function is a test of the store's
// package:
//
//	func TestFleet(t *testing.T) { testFleet(t) }
func ExampleRun() {
	testFleet := func(t *testing.T) {
		fleettest.Run(t, func(t *testing.T) robots.Fleet { return robots.NewMemoryFleet() })
	}
	_ = testFleet
}
