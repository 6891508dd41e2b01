package robots

import (
	"container/list"
	"sync"
)

// MemoryCache is an httpcache.Cache kept in memory that holds at most a
// fixed number of entries and of bytes, forgetting the least recently used
// entries first. It is the store a Transport uses when Options.Cache is
// nil. It is safe for concurrent use.
type MemoryCache struct {
	maxEntries int
	maxBytes   int64

	// mu protects items, lru and bytes.
	mu    sync.Mutex
	items map[string]*list.Element // of *memEntry
	lru   list.List                // most recently used first
	bytes int64                    // keys and values of every entry
}

type memEntry struct {
	key   string
	value []byte
}

// NewMemoryCache returns an empty MemoryCache holding at most maxEntries
// entries and maxBytes bytes of keys and values. A limit of zero or less
// leaves that dimension unbounded.
func NewMemoryCache(maxEntries int, maxBytes int64) *MemoryCache {
	return &MemoryCache{maxEntries: maxEntries, maxBytes: maxBytes, items: make(map[string]*list.Element)}
}

// Get returns the value stored under key and whether there is one, and
// marks it as recently used.
func (c *MemoryCache) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*memEntry).value, true
}

// Set stores value under key, evicting the least recently used entries
// while a limit is exceeded. A value that alone exceeds the byte limit is
// not kept, and any earlier value under key is removed.
func (c *MemoryCache) Set(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	size := int64(len(key) + len(value))
	if c.maxBytes > 0 && size > c.maxBytes {
		return
	}
	c.items[key] = c.lru.PushFront(&memEntry{key: key, value: value})
	c.bytes += size
	for c.maxEntries > 0 && c.lru.Len() > c.maxEntries || c.maxBytes > 0 && c.bytes > c.maxBytes {
		c.remove(c.lru.Back().Value.(*memEntry).key)
	}
}

// Delete removes the value stored under key.
func (c *MemoryCache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
}

// Len returns the number of entries held.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the number of bytes of keys and values held.
func (c *MemoryCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// remove deletes key; c.mu must be held.
func (c *MemoryCache) remove(key string) {
	e, ok := c.items[key]
	if !ok {
		return
	}
	ent := c.lru.Remove(e).(*memEntry)
	delete(c.items, key)
	c.bytes -= int64(len(ent.key) + len(ent.value))
}
