package robots

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of what a Transport has done since it was made.
type Stats struct {
	// Fetches counts robots.txt fetches by outcome.
	Fetches map[Outcome]int64
	// Revalidated counts the fetches answered 304 Not Modified, whose
	// stored copy was reused.
	Revalidated int64
	// Allowed and Refused count the decisions of RoundTrip and Check.
	Allowed, Refused int64
	// Origins is the number of origins held in memory.
	Origins int
	// Waited is the total time requests spent waiting for their
	// politeness slot.
	Waited time.Duration
}

// counters are the live counts behind Stats.
type counters struct {
	parsed, unavailable, unreachable atomic.Int64
	revalidated                      atomic.Int64
	allowed, refused                 atomic.Int64
	waited                           atomic.Int64 // nanoseconds
}

// fetched counts one robots.txt fetch.
func (c *counters) fetched(res fetchResult) {
	switch res.outcome {
	case Parsed:
		c.parsed.Add(1)
	case Unavailable:
		c.unavailable.Add(1)
	case Unreachable:
		c.unreachable.Add(1)
	}
	if res.revalidated {
		c.revalidated.Add(1)
	}
}

// Stats returns a snapshot of the transport's counts.
func (t *Transport) Stats() Stats {
	return Stats{
		Fetches: map[Outcome]int64{
			Parsed:      t.stats.parsed.Load(),
			Unavailable: t.stats.unavailable.Load(),
			Unreachable: t.stats.unreachable.Load(),
		},
		Revalidated: t.stats.revalidated.Load(),
		Allowed:     t.stats.allowed.Load(),
		Refused:     t.stats.refused.Load(),
		Origins:     t.origins.len(),
		Waited:      time.Duration(t.stats.waited.Load()),
	}
}
