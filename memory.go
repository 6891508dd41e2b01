package robots

import (
	"math"
	"sync"
	"unsafe"

	"github.com/crawlkit/robots/policy"
)

// MemoryCache is an httpcache.Cache kept in memory that holds at most a
// fixed number of entries and of bytes, forgetting the least recently
// used entries first. It is the store a Transport uses when Options.Cache
// is nil, where it is read only when an origin's robots state is not in
// memory, so that recency is what counts: the record of an origin just
// fetched outlasts as many newer origins as the cache holds entries,
// however many origins a broad crawl meets once (an admission policy
// that favours entries read often, as W-TinyLFU's, turns a record just
// written away under that churn, and its robots.txt would be fetched
// again). It is safe for concurrent use.
type MemoryCache struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex // protects the fields below
	entries map[string]*memoryEntry
	// recent is the sentinel of a ring of the entries, the most recently
	// used first.
	recent memoryEntry
	bytes  int64 // keys and values of every entry held
}

// memoryEntry is one value of a MemoryCache, in its ring.
type memoryEntry struct {
	key        string
	value      []byte
	prev, next *memoryEntry
}

// NewMemoryCache returns an empty MemoryCache holding at most maxEntries
// entries and maxBytes bytes of keys and values. A limit of zero or less
// leaves that dimension unbounded.
func NewMemoryCache(maxEntries int, maxBytes int64) *MemoryCache {
	return &MemoryCache{maxEntries: maxEntries, maxBytes: maxBytes}
}

func entrySize(key string, value []byte) int64 { return int64(len(key) + len(value)) }

// Get returns the value stored under key and whether there is one.
func (c *MemoryCache) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.unlink(e)
	c.push(e)
	return e.value, true
}

// Set stores value under key, evicting the least recently used entries
// while a limit is exceeded. A value that alone exceeds the byte limit is
// not kept, and any earlier value under key is removed.
func (c *MemoryCache) Set(key string, value []byte) {
	size := entrySize(key, value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.remove(e)
	}
	if c.maxBytes > 0 && size > c.maxBytes {
		return
	}
	if c.entries == nil {
		c.entries = make(map[string]*memoryEntry)
		c.recent.prev, c.recent.next = &c.recent, &c.recent
	}
	e := &memoryEntry{key: key, value: value}
	c.entries[key] = e
	c.push(e)
	c.bytes += size
	for c.maxEntries > 0 && len(c.entries) > c.maxEntries || c.maxBytes > 0 && c.bytes > c.maxBytes {
		c.remove(c.recent.prev)
	}
}

// Delete removes the value stored under key.
func (c *MemoryCache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.remove(e)
	}
}

// Len returns the number of entries held.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Bytes returns the number of bytes of keys and values held.
func (c *MemoryCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// push puts e first in the ring. c.mu is held.
func (c *MemoryCache) push(e *memoryEntry) {
	e.prev, e.next = &c.recent, c.recent.next
	e.next.prev, c.recent.next = e, e
}

// unlink takes e out of the ring. c.mu is held.
func (c *MemoryCache) unlink(e *memoryEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// remove forgets e. c.mu is held.
func (c *MemoryCache) remove(e *memoryEntry) {
	c.unlink(e)
	delete(c.entries, e.key)
	c.bytes -= entrySize(e.key, e.value)
}

// countingWeigher returns an otter weigher of size that also bounds the
// count: otter bounds entries by count or by weight, not by both, so each
// entry weighs at least maxBytes/maxEntries (no floor for maxEntries of
// zero or less).
func countingWeigher[K comparable, V any](maxBytes int64, maxEntries int, size func(K, V) int64) func(K, V) uint32 {
	floor := int64(1)
	if maxEntries > 0 {
		floor = max(maxBytes/int64(maxEntries), 1)
	}
	return func(k K, v V) uint32 {
		return uint32(min(max(size(k, v), floor), math.MaxUint32))
	}
}

// parsedFactor is how many bytes of memory a parsed robots.txt takes per
// byte of its text, its rule index built: TestOriginWeightIsWhatItHolds
// measures about 4 on files of 220 bytes to 22 KB, and
// TestMemoryBoundedInBytes fails if a parse of a 500 KiB file takes more.
const parsedFactor = 4

// stateOverhead is what an origin costs beyond its bodies and their
// parses: the origin, its state and record, their table entry, and the
// parse's fixed part (TestOriginWeightIsWhatItHolds).
const stateOverhead = 1 << 10

// weight estimates the bytes of memory o holds: its state, or an empty
// one's.
func (o *origin) weight() int64 {
	if st := o.current(); st != nil {
		return st.weight()
	}
	return stateOverhead
}

// weight estimates the bytes of memory st holds: its bodies and their
// parses.
func (s *state) weight() int64 {
	n := int64(stateOverhead)
	if s.rec.Outcome == Parsed {
		n += int64(len(s.rec.Body)) * (1 + parsedFactor)
	}
	if s.rec.Good != nil {
		n += int64(len(s.rec.Good.Body)) * (1 + parsedFactor)
	}
	return n + warningsWeight(s.robots)
}

// warningsWeight is what a parse's warnings hold beyond parsedFactor: a
// file of lines crawlers ignore ("Disallow: /%zz%", rules before any
// User-agent) has a warning per line, each longer than its line, and
// would hold twice its weight if they went uncounted.
func warningsWeight(r *policy.Robots) int64 {
	if r == nil {
		return 0
	}
	ws := r.Warnings()
	n := int64(cap(ws)) * int64(unsafe.Sizeof(policy.Warning{}))
	for _, w := range ws {
		n += int64(len(w.Message))
	}
	return n
}
