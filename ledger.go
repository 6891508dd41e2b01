package robots

import (
	"context"
	"sync"
)

// memoryLedger is the Ledger of one process: what a Transport without a
// Fleet keeps its budget in, and MemoryFleet's. It keeps every URL paid
// in a crawl for as long as it lives, which the budget bounds unless
// sites charge nothing. It is safe for concurrent use.
type memoryLedger struct {
	mu     sync.Mutex
	crawls map[string]*crawlBook
}

// crawlBook is one crawl's spending: what was spent, what is reserved,
// and each URL paid (true) or being paid (false).
type crawlBook struct {
	spent, reserved int64
	urls            map[string]bool
}

func newMemoryLedger() *memoryLedger {
	return &memoryLedger{crawls: make(map[string]*crawlBook)}
}

func (m *memoryLedger) book(crawl string) *crawlBook {
	b := m.crawls[crawl]
	if b == nil {
		b = &crawlBook{urls: make(map[string]bool)}
		m.crawls[crawl] = b
	}
	return b
}

// left is what b has left of limit.
func (b *crawlBook) left(limit int64) int64 { return max(limit-b.spent-b.reserved, 0) }

// Reserve sets amount aside for url, as Ledger.Reserve says.
func (m *memoryLedger) Reserve(_ context.Context, crawl, url string, amount, limit int64) (Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.book(crawl)
	if _, ok := b.urls[url]; ok {
		return Reservation{Paid: true, Left: b.left(limit)}, nil
	}
	if b.spent+b.reserved+amount > limit {
		return Reservation{Left: b.left(limit)}, nil
	}
	b.reserved += amount
	b.urls[url] = false
	return Reservation{Reserved: true, Left: b.left(limit)}, nil
}

// Settle spends charged for url, as Ledger.Settle says.
func (m *memoryLedger) Settle(_ context.Context, crawl, url string, reserved, charged int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.book(crawl)
	if paid, ok := b.urls[url]; ok && !paid {
		b.reserved = max(b.reserved-reserved, 0)
	}
	b.spent += charged
	b.urls[url] = true
	return nil
}

// Release gives url's reservation back, as Ledger.Release says.
func (m *memoryLedger) Release(_ context.Context, crawl, url string, reserved int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.book(crawl)
	if paid, ok := b.urls[url]; ok && !paid {
		b.reserved = max(b.reserved-reserved, 0)
		delete(b.urls, url)
	}
	return nil
}
