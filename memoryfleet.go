package robots

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// MemoryFleet is a Fleet kept in one process's memory: transports of one
// process given the same MemoryFleet behave as members of one fleet, as
// they would on redisstore, which makes it the store to test a crawler's
// fleet behaviour with, and the in-memory implementation package
// fleettest is run against. Its pace is the one a Transport keeps alone.
// Records and leases are kept until the MemoryFleet is dropped. It is
// safe for concurrent use.
type MemoryFleet struct {
	*localPace
	*memoryLedger

	// mu protects records and leases.
	mu      sync.Mutex
	records map[RecordKey][]byte
	leases  map[OriginKey]memoryLease
}

// memoryLease is who holds an origin's fetch lease, and until when.
type memoryLease struct {
	token string
	until time.Time
}

// memoryFleetSchedules is how many origins' paces a MemoryFleet holds
// before it forgets the idle ones.
const memoryFleetSchedules = 1 << 16

// NewMemoryFleet returns an empty MemoryFleet.
func NewMemoryFleet() *MemoryFleet {
	return &MemoryFleet{
		localPace:    newLocalPace(memoryFleetSchedules, time.Now),
		memoryLedger: newMemoryLedger(),
		records:      make(map[RecordKey][]byte),
		leases:       make(map[OriginKey]memoryLease),
	}
}

var _ Fleet = (*MemoryFleet)(nil)

// Load returns the record stored under key, and whether there is one.
func (m *MemoryFleet) Load(_ context.Context, key RecordKey) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.records[key]
	return bytes.Clone(v), ok, nil
}

// Swap stores new under key only if the stored value equals old (old
// nil: only if there is none), and reports whether it stored.
func (m *MemoryFleet) Swap(_ context.Context, key RecordKey, old, new []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.records[key]
	if old == nil && ok || old != nil && (!ok || !bytes.Equal(cur, old)) {
		return false, nil
	}
	m.records[key] = bytes.Clone(new)
	if m.records[key] == nil {
		m.records[key] = []byte{}
	}
	return true, nil
}

// Lease takes the lease on fetching origin's robots.txt for ttl, on the
// real clock, if no one else holds it, and reports whether token now
// holds it; the holder taking it again holds it for ttl from then.
func (m *MemoryFleet) Lease(_ context.Context, origin OriginKey, token string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if l, ok := m.leases[origin]; ok && now.Before(l.until) && l.token != token {
		return false, nil
	}
	m.leases[origin] = memoryLease{token: token, until: now.Add(max(ttl, time.Millisecond))}
	return true, nil
}

// Unlease gives origin's lease up if token still holds it.
func (m *MemoryFleet) Unlease(_ context.Context, origin OriginKey, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[origin]; ok && l.token == token {
		delete(m.leases, origin)
	}
	return nil
}
