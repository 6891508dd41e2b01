package robots_test

import (
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/pacetest"
)

// TestLocalPaceConformance runs the Pace contract's suite against the
// in-memory pace a Transport without a FleetStore paces by.
func TestLocalPaceConformance(t *testing.T) {
	pacetest.Run(t, func(*testing.T) robots.Pace { return robots.NewLocalPace() })
}
