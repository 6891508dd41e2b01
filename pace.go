package robots

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
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

// schedule is one origin's pace in a localPace: its last slot, held by a
// rate.Limiter of one request per interval with a burst of one, any
// Retry-After pause, and the members counted on it. Every slot is taken
// at the moment its request is handed on (the pacer reserves with a
// Limit of its Now), so the last slot is the last real send and a slot
// given back is always the last one, which the limiter gives back
// exactly. It is safe for concurrent use.
type schedule struct {
	key OriginKey
	// ringPrev and ringNext link the schedule into its table's ring
	// (ringNext toward the oldest); guarded by the table's lock.
	ringPrev, ringNext *schedule
	// pausedUntil is the UnixNano time until which a Retry-After pauses
	// the origin, 0 when none; atomic so that an unpaced request takes no
	// lock.
	pausedUntil atomic.Int64
	// line is the pacer's waiting line for the origin (pacer.go), kept
	// here so that it lives as long as the schedule.
	line line

	// mu protects the fields below.
	mu sync.Mutex
	// last is the latest slot taken, or raised to by a SlotRequest's
	// Held; zero before the first. prev is the one before it, which a
	// slot given back restores.
	last, prev time.Time
	// lim holds last at interval: its next token comes interval after
	// last. nil before the first slot with an interval.
	lim      *rate.Limiter
	interval time.Duration
	// seen is when each member that reserved here stops counting.
	seen map[string]time.Time
	// epoch is the epoch the first reservation offered.
	epoch string
}

// busy reports whether s still holds anything back at now: a waiter, a
// pause, or a slot within its interval.
func (s *schedule) busy(now time.Time) bool {
	if s.line.len() > 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextLocked(SlotRequest{Now: now, Interval: s.interval}).After(now)
}

// paused returns the time until which a Retry-After pauses the origin; the
// zero time when none does.
func (s *schedule) paused() time.Time {
	if n := s.pausedUntil.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// pauseUntil makes the pause last until at least until, reporting
// whether it grew: the latest Retry-After never shortens a pause that an
// earlier one asked for.
func (s *schedule) pauseUntil(until time.Time) bool {
	for {
		cur := s.pausedUntil.Load()
		if until.UnixNano() <= cur {
			return false
		}
		if s.pausedUntil.CompareAndSwap(cur, until.UnixNano()) {
			return true
		}
	}
}

// reserve reserves req's slot: the earliest no sooner than req.Now and
// req.NotBefore, than the end of any pause, and than an interval after
// the last slot, raised first to req.Held. Past req.Limit nothing is
// reserved.
func (s *schedule) reserve(req SlotRequest) Slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == "" {
		s.epoch = req.Epoch
	}
	s.raise(req.Held)
	slot := Slot{At: s.nextLocked(req), Epoch: s.epoch}
	if !req.Limit.IsZero() && slot.At.After(req.Limit) {
		slot.Members = s.count(req, req.Now)
		return slot
	}
	slot.Members = s.count(req, slot.At)
	slot.Reserved = true
	s.prev = s.last
	s.take(slot.At.Add(max(req.Spread, 0)), req.Interval)
	return slot
}

// next returns the slot req would be given, without reserving it.
func (s *schedule) next(req SlotRequest) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.last
	if req.Held.After(held) {
		held = req.Held
	}
	at := s.nextLocked(req)
	if req.Interval > 0 && !held.IsZero() {
		at = latest(at, slotTime(held.Add(req.Interval)))
	}
	return at
}

// nextLocked is next without req.Held. s.mu is held.
func (s *schedule) nextLocked(req SlotRequest) time.Time {
	t := latest(req.Now, req.NotBefore, s.paused())
	if req.Interval <= 0 || s.last.IsZero() {
		return slotTime(t)
	}
	lim := s.limiter(req.Interval)
	if tokens := lim.TokensAt(latest(t, s.last)); tokens < 1 {
		t = latest(t, s.last).Add(time.Duration((1 - tokens) * float64(req.Interval)))
	}
	return slotTime(t)
}

// limiter returns the limiter holding the last slot at interval: a
// changed interval counts from the last slot, never at the old rate.
// s.mu is held.
func (s *schedule) limiter(interval time.Duration) *rate.Limiter {
	if s.lim == nil || s.interval != interval {
		s.lim, s.interval = rate.NewLimiter(rate.Every(interval), 1), interval
		s.lim.AllowN(s.last, 1)
	}
	return s.lim
}

// take makes at, of a request spaced by interval, the last slot. s.mu is
// held.
func (s *schedule) take(at time.Time, interval time.Duration) {
	s.last = latest(s.last, at)
	if interval <= 0 || s.lim != nil && s.interval == interval && s.lim.AllowN(at, 1) {
		return
	}
	s.lim, s.interval = nil, 0
	s.limiter(interval)
}

// raise makes held the last slot if it is later. s.mu is held.
func (s *schedule) raise(held time.Time) {
	if held.After(s.last) {
		s.prev, s.last = s.last, held
		if s.interval > 0 {
			s.take(held, s.interval)
		}
	}
}

// sent records that a request went at at, the slot it was handed on in:
// the next slot counts from it.
func (s *schedule) sent(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raise(at)
}

// lastSlot returns the last slot.
func (s *schedule) lastSlot() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// cancel gives back the slot at if it is still the last one.
func (s *schedule) cancel(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() && s.last.Equal(at) {
		s.last = s.prev
		if s.interval > 0 {
			s.lim = nil
			s.limiter(s.interval)
		}
	}
}

// count counts req.Member as pacing the origin until the window of its
// slot at ends, and returns how many members do. s.mu is held.
func (s *schedule) count(req SlotRequest, at time.Time) int {
	if req.Member == "" {
		return 1
	}
	if s.seen == nil {
		s.seen = make(map[string]time.Time, 1)
	}
	until := at.Add(MemberWindowFor(req.Interval))
	if until.After(s.seen[req.Member]) {
		s.seen[req.Member] = until
	}
	for m, end := range s.seen {
		if end.Before(req.Now) {
			delete(s.seen, m)
		}
	}
	return len(s.seen)
}

// latest returns the latest of times.
func latest(times ...time.Time) time.Time {
	var t time.Time
	for _, u := range times {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// slotTime rounds a slot to the microsecond: a Limiter's arithmetic is in
// floating point, a few nanoseconds off a whole interval, and a store
// keeps microseconds.
func slotTime(t time.Time) time.Time { return t.Round(time.Microsecond) }
