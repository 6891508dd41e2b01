package robots

import (
	"sync"
	"time"
)

// table holds one entry per origin key, made on first use: a map, and a
// ring in the order entries were made or last passed over. A full table
// drops the oldest entry that holds nothing back, passing over at most
// evictTries busy ones (a clock, or second chance, eviction) rather than
// scanning; when every one it passes over is busy it grows instead, up
// to overflow times its size, so that forgetting an entry does not end a
// pause or a delay still running; only past that bound is a busy one
// dropped. Finding, keeping and dropping an entry costs the same however
// many are held. It is safe for concurrent use; busy is called with the
// table's lock held.
type table[E interface{ busy(time.Time) bool }] struct {
	size  int
	now   func() time.Time
	fresh func(OriginKey) E

	// mu protects m and the ring through ring.
	mu   sync.Mutex
	m    map[OriginKey]*entry[E]
	ring entry[E] // sentinel: ring.next is the newest, ring.prev the oldest
}

// entry is one entry of a table, linked into its ring.
type entry[E any] struct {
	key        OriginKey
	e          E
	prev, next *entry[E]
}

// minSchedules is the fewest entries a table holds, so that a small
// MaxOrigins does not make pauses short-lived.
const minSchedules = 1024

// evictTries bounds how many entries still in use a full table passes
// over before it grows instead: the price of a new origin stays constant
// when every entry is busy.
const evictTries = 8

// overflow is how many times its size a table of busy entries may grow
// to before it drops the oldest of them anyway, so that memory stays
// bounded whatever the sites answer: a crawl would need that many
// origins paused, or within their delay, at once.
const overflow = 4

func (t *table[E]) init(size int, now func() time.Time, fresh func(OriginKey) E) {
	t.size, t.now, t.fresh = max(size, minSchedules), now, fresh
	t.m = make(map[OriginKey]*entry[E])
	t.ring.prev, t.ring.next = &t.ring, &t.ring
}

// get returns key's entry, making one if needed.
func (t *table[E]) get(key OriginKey) E {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.m[key]; n != nil {
		return n.e
	}
	if len(t.m) >= t.size {
		t.evict()
	}
	n := &entry[E]{key: key, e: t.fresh(key)}
	t.m[key] = n
	t.push(n)
	return n.e
}

// peek returns key's entry, if the table holds one, making none.
func (t *table[E]) peek(key OriginKey) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.m[key]; n != nil {
		return n.e, true
	}
	var none E
	return none, false
}

// count returns how many entries f holds true of, f called with the
// table's lock held.
func (t *table[E]) count(f func(E) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, e := range t.m {
		if f(e.e) {
			n++
		}
	}
	return n
}

func (t *table[E]) push(n *entry[E]) {
	n.prev, n.next = &t.ring, t.ring.next
	t.ring.next.prev = n
	t.ring.next = n
}

func (t *table[E]) unlink(n *entry[E]) { n.prev.next, n.next.prev = n.next, n.prev }

// evict drops the oldest entry that holds nothing back, giving the busy
// ones it passes a second chance at the new end of the ring; after
// evictTries of those the table grows, and only at overflow times its
// size does the oldest go anyway. t.mu is held.
func (t *table[E]) evict() {
	now := t.now()
	for range evictTries {
		n := t.ring.prev
		t.unlink(n)
		if !n.e.busy(now) {
			delete(t.m, n.key)
			return
		}
		t.push(n)
	}
	if len(t.m) >= overflow*t.size {
		n := t.ring.prev
		t.unlink(n)
		delete(t.m, n.key)
	}
}
