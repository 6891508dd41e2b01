package robots

import "time"

// NewLocalPace returns the in-memory Pace a Transport paces by, for the
// conformance suite in package robots_test.
func NewLocalPace() Pace { return newLocalPace(0, time.Now) }
