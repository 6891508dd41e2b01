package robots

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// localPace is the Pace of one process, on golang.org/x/time/rate: what a
// Transport without a Fleet paces by, what a fleet member falls back on
// while its store is down, and the pace of NewMemoryFleet. Its schedules
// are a table of their own, so that forgetting an origin's robots.txt or
// line never shortens a wait. It is safe for concurrent use.
type localPace struct{ schedules table[*schedule] }

// schedule is one origin's slots in a localPace. The pacer reserves with
// a Limit of its Now, as its request is handed on, and tells its last
// send as Held, so the last slot is the last send and a slot given back
// is always the last, which prev restores exactly. It is safe for
// concurrent use.
type schedule struct {
	mu sync.Mutex
	// last is the latest slot reserved or Held, prev the one before.
	last, prev time.Time
	// lim holds last at interval, one token per interval with a burst of
	// one; nil when it is to be made anew from last.
	lim      *rate.Limiter
	interval time.Duration
	paused   time.Time
	seen     map[string]time.Time // when each member stops counting
	epoch    string               // the first reservation's
}

// newLocalPace returns a localPace of maxSchedules schedules (see table).
func newLocalPace(maxSchedules int, now func() time.Time) *localPace {
	p := &localPace{}
	p.schedules.init(maxSchedules, now, func(OriginKey) *schedule { return new(schedule) })
	return p
}

// ReserveSlot reserves origin's next slot for req, as a Fleet's does in
// the fleet.
func (p *localPace) ReserveSlot(_ context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	return p.schedules.get(origin).reserve(req), nil
}

// CancelSlot gives back the slot at of origin if it is still the last
// one reserved.
func (p *localPace) CancelSlot(_ context.Context, origin OriginKey, at time.Time, _ time.Duration) error {
	s := p.schedules.get(origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() && s.last.Equal(at) {
		s.last = s.prev
		s.lim = nil
	}
	return nil
}

// Pause holds every later slot of origin until at least until.
func (p *localPace) Pause(_ context.Context, origin OriginKey, until time.Time) error {
	s := p.schedules.get(origin)
	s.mu.Lock()
	s.paused = latest(s.paused, until)
	s.mu.Unlock()
	return nil
}

// NextSlot returns the slot a ReserveSlot of req would reserve, without
// reserving it.
func (p *localPace) NextSlot(_ context.Context, origin OriginKey, req SlotRequest) (time.Time, error) {
	s := p.schedules.get(origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.next(req)
	if held := latest(s.last, req.Held); req.Interval > 0 && !held.IsZero() {
		at = latest(at, slotTime(held.Add(req.Interval)))
	}
	return at, nil
}

// busy reports whether s still holds anything back at now: a pause, or
// a slot within its interval.
func (s *schedule) busy(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next(SlotRequest{Now: now, Interval: s.interval}).After(now)
}

// reserve reserves req's slot, as Pace.ReserveSlot says.
func (s *schedule) reserve(req SlotRequest) Slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == "" {
		s.epoch = req.Epoch
	}
	if req.Held.After(s.last) {
		s.prev, s.last, s.lim = s.last, req.Held, nil
	}
	slot := Slot{At: s.next(req), Epoch: s.epoch}
	if !req.Limit.IsZero() && slot.At.After(req.Limit) {
		slot.Members = s.count(req, req.Now)
		return slot
	}
	slot.Members, slot.Reserved = s.count(req, slot.At), true
	s.prev = s.last
	at := slot.At.Add(max(req.Spread, 0))
	s.last = latest(s.last, at)
	if s.lim == nil || !s.lim.AllowN(at, 1) {
		s.lim = nil
	}
	return slot
}

// next returns req's slot, Held aside, reserving nothing. s.mu is held.
func (s *schedule) next(req SlotRequest) time.Time {
	t := latest(req.Now, req.NotBefore, s.paused)
	if req.Interval <= 0 || s.last.IsZero() {
		return slotTime(t)
	}
	if tokens := s.limiter(req.Interval).TokensAt(latest(t, s.last)); tokens < 1 {
		t = latest(t, s.last).Add(time.Duration((1 - tokens) * float64(req.Interval)))
	}
	return slotTime(t)
}

// limiter returns the limiter holding last at interval: a changed
// interval counts from last, never at the old rate. s.mu is held.
func (s *schedule) limiter(interval time.Duration) *rate.Limiter {
	if s.lim == nil || s.interval != interval {
		s.lim, s.interval = rate.NewLimiter(rate.Every(interval), 1), interval
		s.lim.AllowN(s.last, 1)
	}
	return s.lim
}

// count counts req.Member on the origin for the window after at, and
// returns how many members are counted. s.mu is held.
func (s *schedule) count(req SlotRequest, at time.Time) int {
	if req.Member == "" {
		return 1
	}
	if s.seen == nil {
		s.seen = make(map[string]time.Time, 1)
	}
	s.seen[req.Member] = latest(s.seen[req.Member], at.Add(MemberWindowFor(req.Interval)))
	for m, end := range s.seen {
		if end.Before(req.Now) {
			delete(s.seen, m)
		}
	}
	return len(s.seen)
}
