package robots

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// origin is what a transport holds in memory for one origin: its parsed
// robots state and its politeness schedule. It is safe for concurrent use.
type origin struct {
	key string

	// mu protects st, lim, delay and pausedUntil.
	mu          sync.Mutex
	st          *state
	lim         *rate.Limiter // nil until the first request waits
	delay       time.Duration // the limiter's interval
	pausedUntil time.Time     // from a Retry-After
}

// current returns the origin's state, or nil before the first lookup.
func (o *origin) current() *state {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st
}

func (o *origin) set(st *state) {
	o.mu.Lock()
	o.st = st
	o.mu.Unlock()
}

// originTable holds at most max origins in memory, forgetting the least
// recently used first. A forgotten origin's robots state stays in the
// store; its politeness schedule starts afresh. It is safe for concurrent
// use.
type originTable struct {
	max int

	// mu protects m and lru.
	mu  sync.Mutex
	m   map[string]*list.Element // of *origin
	lru list.List                // most recently used first
}

// get returns the origin for key, creating it if needed.
func (tb *originTable) get(key string) *origin {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if e, ok := tb.m[key]; ok {
		tb.lru.MoveToFront(e)
		return e.Value.(*origin)
	}
	if tb.m == nil {
		tb.m = make(map[string]*list.Element)
	}
	o := &origin{key: key}
	tb.m[key] = tb.lru.PushFront(o)
	for tb.lru.Len() > tb.max {
		old := tb.lru.Remove(tb.lru.Back()).(*origin)
		delete(tb.m, old.key)
	}
	return o
}

// len returns the number of origins held.
func (tb *originTable) len() int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.lru.Len()
}
