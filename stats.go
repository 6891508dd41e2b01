package robots

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of what a Transport has done since it was made.
type Stats struct {
	// Fetches counts robots.txt fetches by outcome; a fetch answered 304
	// counts under the outcome of the copy it renewed.
	Fetches map[Outcome]int64
	// FetchStatus counts robots.txt fetches by the class of the status
	// they ended on, after redirects: "2xx", "3xx" (a 304 revalidation,
	// too many redirects, or one without a Location), "4xx", "5xx", and
	// "network" for a fetch
	// that got no answer (a network error, a timeout, a panic).
	FetchStatus map[string]int64
	// Revalidated counts the fetches answered 304 Not Modified to the
	// transport's own conditional GET, whose stored copy was renewed. A
	// server's X-From-Cache header is never taken as one.
	Revalidated int64
	// Allowed and Refused count the decisions of RoundTrip and Check.
	Allowed, Refused int64
	// Sent counts the requests RoundTrip handed to the base RoundTripper:
	// those allowed, once their politeness wait was over, and requests
	// for /robots.txt itself. Requests that Check allowed are not sent and
	// not counted here.
	Sent int64
	// RobotsRequests counts the requests for /robots.txt itself that went
	// through RoundTrip (always allowed, and paced); the transport's own
	// robots.txt fetches are counted by Fetches instead.
	RobotsRequests int64
	// Origins is the number of origins held in memory.
	Origins int
	// Waited is the total time requests spent waiting for their
	// politeness slot.
	Waited time.Duration
}

// statusClasses are the keys of Stats.FetchStatus.
var statusClasses = [...]string{"2xx", "3xx", "4xx", "5xx", "network"}

// counters are the live counts behind Stats.
type counters struct {
	parsed, unavailable, unreachable atomic.Int64
	status                           [len(statusClasses)]atomic.Int64
	revalidated                      atomic.Int64
	allowed, refused                 atomic.Int64
	sent, robotsRequests             atomic.Int64
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
	class := res.class()
	for i, k := range statusClasses {
		if k == class {
			c.status[i].Add(1)
		}
	}
	if res.notModified {
		c.revalidated.Add(1)
	}
}

// snapshot returns the counts as Stats, with origins the number of
// origins held.
func (c *counters) snapshot(origins int) Stats {
	s := Stats{
		Fetches: map[Outcome]int64{
			Parsed:      c.parsed.Load(),
			Unavailable: c.unavailable.Load(),
			Unreachable: c.unreachable.Load(),
		},
		FetchStatus:    make(map[string]int64, len(statusClasses)),
		Revalidated:    c.revalidated.Load(),
		Allowed:        c.allowed.Load(),
		Refused:        c.refused.Load(),
		Sent:           c.sent.Load(),
		RobotsRequests: c.robotsRequests.Load(),
		Origins:        origins,
		Waited:         time.Duration(c.waited.Load()),
	}
	for i, k := range statusClasses {
		s.FetchStatus[k] = c.status[i].Load()
	}
	return s
}
