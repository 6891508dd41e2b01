package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"sync"
)

// maxSeen bounds the records a Store remembers having read. Past it the
// memory is cleared: a forgotten read only lets Lease take a free lease
// without checking the record.
const maxSeen = 4096

// seenRecords remembers, per record key, the SHA-1 of the value the
// Store's last Get read, until the next Lease of that key: the transport
// reads a record, finds it missing or due, and then asks for the lease.
// It is safe for concurrent use.
type seenRecords struct {
	// mu protects digests.
	mu      sync.Mutex
	digests map[string]string
}

// note remembers what a Get of key read; "" stands for a miss.
func (r *seenRecords) note(key string, val []byte, found bool) {
	digest := ""
	if found {
		sum := sha1.Sum(val)
		digest = hex.EncodeToString(sum[:])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.digests == nil || len(r.digests) >= maxSeen {
		r.digests = make(map[string]string)
	}
	r.digests[key] = digest
}

// take returns and forgets the digest noted for key, and reports whether
// there was one.
func (r *seenRecords) take(key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.digests[key]
	delete(r.digests, key)
	return d, ok
}
