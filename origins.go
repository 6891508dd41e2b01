package robots

import (
	"container/list"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// origin is what a transport holds in memory for one origin: its parsed
// robots state and a pointer to its politeness schedule, which the pacer
// owns. It is safe for concurrent use.
type origin struct {
	key string

	// st is read on every request and written only after a fetch, so it
	// is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// sched is the origin's schedule in the pacer's table, nil until
	// the first request looks it up.
	sched atomic.Pointer[schedule]
}

// current returns the origin's state, or nil before the first lookup.
func (o *origin) current() *state { return o.st.Load() }

func (o *origin) set(st *state) { o.st.Store(st) }

// originTable holds at most a fixed number of origins in memory,
// forgetting the least recently used first. A forgotten origin's robots
// state stays in the store and its politeness schedule in the pacer. It is
// safe for concurrent use: the origins are spread over shards, each with
// its own lock, so that requests to different origins do not queue on one
// lock.
type originTable struct {
	shards []originShard
	seed   maphash.Seed
}

// originShard is one lock's worth of an originTable.
type originShard struct {
	max int

	// mu protects m and lru.
	mu  sync.Mutex
	m   map[string]*list.Element // of *origin
	lru list.List                // most recently used first
}

// minPerShard is the fewest origins a shard holds: below it, a table is
// one shard, so that a small bound is kept exactly.
const minPerShard = 256

// init makes a table that holds at most max origins.
func (tb *originTable) init(max int) {
	n := min(64, max/minPerShard)
	if n < 1 {
		n = 1
	}
	tb.seed = maphash.MakeSeed()
	tb.shards = make([]originShard, n)
	for i := range tb.shards {
		// Spread max exactly: the first max%n shards hold one more.
		tb.shards[i].max = max / n
		if i < max%n {
			tb.shards[i].max++
		}
	}
}

// get returns the origin for key, creating it if needed. key is only
// copied when the origin is new, so callers may pass a reused buffer.
func (tb *originTable) get(key []byte) *origin {
	sh := &tb.shards[maphash.Bytes(tb.seed, key)%uint64(len(tb.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.m[string(key)]; ok {
		sh.lru.MoveToFront(e)
		return e.Value.(*origin)
	}
	if sh.m == nil {
		sh.m = make(map[string]*list.Element)
	}
	o := &origin{key: string(key)}
	sh.m[o.key] = sh.lru.PushFront(o)
	for sh.lru.Len() > sh.max {
		old := sh.lru.Remove(sh.lru.Back()).(*origin)
		delete(sh.m, old.key)
	}
	return o
}

// len returns the number of origins held.
func (tb *originTable) len() int {
	n := 0
	for i := range tb.shards {
		sh := &tb.shards[i]
		sh.mu.Lock()
		n += sh.lru.Len()
		sh.mu.Unlock()
	}
	return n
}
