package robots

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

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
	// sentAt is the UnixNano time the last request was handed on, 0
	// before the first: atomic, so that handing a request on never waits
	// for the lock, nor yields to a goroutine waiting for it, between
	// reading the clock and calling the base. Taking the lock folds it
	// into last.
	sentAt atomic.Int64

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
	s.lock()
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
	s.lock()
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
	s.lock()
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

// sent records that a request goes now, on clock, the last thing before
// it is handed on: the next slot counts from it.
func (s *schedule) sent(clock func() time.Time) {
	at := slotTime(clock()).UnixNano()
	for cur := s.sentAt.Load(); at > cur && !s.sentAt.CompareAndSwap(cur, at); cur = s.sentAt.Load() {
	}
}

// lock takes s.mu, the last send folded into the last slot.
func (s *schedule) lock() {
	s.mu.Lock()
	if n := s.sentAt.Load(); n != 0 {
		s.raise(time.Unix(0, n))
	}
}

// lastSlot returns the last slot.
func (s *schedule) lastSlot() time.Time {
	s.lock()
	defer s.mu.Unlock()
	return s.last
}

// cancel gives back the slot at if it is still the last one.
func (s *schedule) cancel(at time.Time) {
	s.lock()
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
