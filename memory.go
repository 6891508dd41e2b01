package robots

import (
	"math"
	"sync/atomic"

	"github.com/maypok86/otter/v2"
)

// MemoryCache is an httpcache.Cache kept in memory that holds at most a
// fixed number of entries and of bytes, forgetting the least useful
// entries first (otter's W-TinyLFU, close to least recently used). It is
// the store a Transport uses when Options.Cache is nil. It is safe for
// concurrent use.
type MemoryCache struct {
	cache *otter.Cache[string, []byte]
	bytes atomic.Int64 // keys and values of every entry held
}

// NewMemoryCache returns an empty MemoryCache holding at most maxEntries
// entries and maxBytes bytes of keys and values. A limit of zero or less
// leaves that dimension unbounded.
func NewMemoryCache(maxEntries int, maxBytes int64) *MemoryCache {
	c := &MemoryCache{}
	opts := &otter.Options[string, []byte]{
		OnAtomicDeletion: func(e otter.DeletionEvent[string, []byte]) {
			c.bytes.Add(-entrySize(e.Key, e.Value))
		},
	}
	switch {
	case maxBytes > 0:
		opts.MaximumWeight = uint64(maxBytes)
		opts.Weigher = countingWeigher(maxBytes, maxEntries, entrySize)
	case maxEntries > 0:
		opts.MaximumSize = maxEntries
	}
	c.cache = otter.Must(opts)
	return c
}

func entrySize(key string, value []byte) int64 { return int64(len(key) + len(value)) }

// Get returns the value stored under key and whether there is one.
func (c *MemoryCache) Get(key string) ([]byte, bool) {
	return c.cache.GetIfPresent(key)
}

// Set stores value under key, evicting entries while a limit is exceeded.
// A value that alone exceeds the byte limit is not kept, and any earlier
// value under key is removed.
func (c *MemoryCache) Set(key string, value []byte) {
	if m := c.cache.GetMaximum(); c.cache.IsWeighted() && uint64(entrySize(key, value)) > m {
		c.cache.Invalidate(key)
		return
	}
	c.bytes.Add(entrySize(key, value))
	c.cache.Set(key, value)
}

// Delete removes the value stored under key.
func (c *MemoryCache) Delete(key string) {
	c.cache.Invalidate(key)
}

// Len returns the number of entries held.
func (c *MemoryCache) Len() int {
	c.cache.CleanUp()
	return c.cache.EstimatedSize()
}

// Bytes returns the number of bytes of keys and values held.
func (c *MemoryCache) Bytes() int64 {
	c.cache.CleanUp()
	return c.bytes.Load()
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
	return n
}
