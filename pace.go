package robots

import (
	"context"
	"sync"
	"time"
)

// localPace is the Pace of one process, on golang.org/x/time/rate: what a
// Transport without a Fleet paces by, what a fleet member paces by alone
// while its store is unavailable, and the pace of NewMemoryFleet. Its
// schedules live in a table of their own, larger than the origin table, so that forgetting an
// origin's parsed robots.txt never shortens a wait. Keeping, finding and
// dropping a schedule costs the same however many are held: the table is
// a map and a ring in the order schedules were made or last passed over,
// and a full table drops the oldest that holds nothing back, passing over
// at most evictTries busy ones (a clock, or second chance, eviction),
// never scanning it. When every one it passes over is busy the table
// grows instead, up to overflow times its size, so that forgetting a
// schedule does not end a pause or a delay still running; only past that
// bound is a busy one dropped. It is safe for concurrent use.
type localPace struct {
	now func() time.Time
	max int

	// mu protects table and the ring of schedules through ring.
	mu    sync.Mutex
	table map[OriginKey]*schedule
	ring  schedule // sentinel: ring.ringNext is the newest, ring.ringPrev the oldest
}

// minSchedules is the fewest schedules a pacer holds, so that a small
// MaxOrigins does not make pauses short-lived.
const minSchedules = 1024

// evictTries bounds how many schedules still in use a full table passes
// over before it grows instead: the price of a new origin stays constant
// when every schedule is busy.
const evictTries = 8

// overflow is how many times its size a table of busy schedules may
// grow to before it drops the oldest of them anyway, so that memory
// stays bounded whatever the sites answer: a crawl would need that many
// origins paused, or within their delay, at once.
const overflow = 4

// memberWindow is the least time a member counts as pacing an origin
// after its last slot there; it widens to 32 intervals for long delays,
// so that a member that paces a slow origin stays counted between its
// own slots (three members on a 30 s Crawl-delay send one each 90 s).
const memberWindow = time.Minute

// MemberWindowFor returns how long after its last slot a member of a fleet
// still counts as pacing an origin of interval: a minute, or 32
// intervals when longer, so that a member whose own slots are members
// times the interval apart stays counted between them for up to 32
// members. A Fleet counts members over this window.
func MemberWindowFor(interval time.Duration) time.Duration {
	return max(memberWindow, 32*interval)
}

func newLocalPace(maxSchedules int, now func() time.Time) *localPace {
	p := &localPace{now: now, max: max(maxSchedules, minSchedules), table: make(map[OriginKey]*schedule)}
	p.ring.ringNext, p.ring.ringPrev = &p.ring, &p.ring
	return p
}

// schedule returns the schedule of key, making one if needed.
func (p *localPace) schedule(key OriginKey) *schedule {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.table[key]; s != nil {
		return s
	}
	if len(p.table) >= p.max {
		p.evict(p.now())
	}
	s := &schedule{key: key}
	p.table[key] = s
	p.pushNewest(s)
	return s
}

func (p *localPace) pushNewest(s *schedule) {
	s.ringPrev, s.ringNext = &p.ring, p.ring.ringNext
	p.ring.ringNext.ringPrev = s
	p.ring.ringNext = s
}

func (p *localPace) unlink(s *schedule) {
	s.ringPrev.ringNext, s.ringNext.ringPrev = s.ringNext, s.ringPrev
	s.ringPrev, s.ringNext = nil, nil
}

// evict drops the oldest schedule that holds nothing back, giving the
// ones still in use a second chance at the new end of the ring; after
// evictTries of those, the table grows, and only at overflow times its
// size does the oldest go anyway. p.mu is held.
func (p *localPace) evict(now time.Time) {
	for range evictTries {
		s := p.ring.ringPrev
		if s.busy(now) {
			p.unlink(s)
			p.pushNewest(s)
			continue
		}
		p.drop(s)
		return
	}
	if len(p.table) >= overflow*p.max {
		p.drop(p.ring.ringPrev)
	}
}

func (p *localPace) drop(s *schedule) {
	p.unlink(s)
	delete(p.table, s.key)
}

// ReserveSlot reserves origin's next slot for req, as a Fleet's does in
// the fleet.
func (p *localPace) ReserveSlot(_ context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	return p.schedule(origin).reserve(req), nil
}

// CancelSlot gives back the slot at of origin if it is still the last
// one reserved.
func (p *localPace) CancelSlot(_ context.Context, origin OriginKey, at time.Time, _ time.Duration) error {
	p.schedule(origin).cancel(at)
	return nil
}

// Pause holds every later slot of origin until at least until.
func (p *localPace) Pause(_ context.Context, origin OriginKey, until time.Time) error {
	p.schedule(origin).pauseUntil(until)
	return nil
}

// NextSlot returns the slot a ReserveSlot of req would reserve, without
// reserving it.
func (p *localPace) NextSlot(_ context.Context, origin OriginKey, req SlotRequest) (time.Time, error) {
	return p.schedule(origin).next(req), nil
}
