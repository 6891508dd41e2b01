package robots

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// localPace is the Pace of one process, on golang.org/x/time/rate: what a
// Transport without a Fleet paces by, and what a fleet member paces
// by alone while its store is unavailable. Its schedules live in a table
// of their own, larger than the origin table, so that forgetting an
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

// len returns the number of schedules held.
func (p *localPace) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.table)
}

// ReserveSlot reserves origin's next slot for req in this process, as a
// Fleet's does in the fleet.
func (p *localPace) ReserveSlot(_ context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	s := p.schedule(origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	b, slot := s.reserve(req, 1)
	s.last = b
	return slot, nil
}

// CancelSlot gives back the slot at of origin if it is still the last
// one reserved through ReserveSlot. (The pacer's own waiting line does
// more: a waiter leaving its middle moves the later ones up.)
func (p *localPace) CancelSlot(_ context.Context, origin OriginKey, at time.Time, _ time.Duration) error {
	s := p.schedule(origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.last; b != nil && b.at.Equal(at) {
		// The latest time the limiter was given: the callers' clock.
		s.unbook(b, s.floor)
		s.last = nil
	}
	return nil
}

// Pause holds every slot of origin, reserved or not, until at least
// until.
func (p *localPace) Pause(_ context.Context, origin OriginKey, until time.Time) error {
	p.schedule(origin).pauseUntil(until, p.now())
	return nil
}

// NextSlot returns the slot a ReserveSlot of req would reserve, without
// reserving it.
func (p *localPace) NextSlot(_ context.Context, origin OriginKey, req SlotRequest) (time.Time, error) {
	s := p.schedule(origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next(req), nil
}

// schedule is one origin's pace in a localPace. Slots are reserved on a
// rate.Limiter of one request per delay with a burst of one, in arrival
// order.
type schedule struct {
	key OriginKey
	// ringPrev and ringNext link the schedule into its table's ring
	// (ringNext toward the oldest); guarded by the table's lock.
	ringPrev, ringNext *schedule
	// pausedUntil is the UnixNano time until which a Retry-After pauses
	// the origin, 0 when none; atomic so that an unpaced request takes no
	// lock.
	pausedUntil atomic.Int64

	// mu protects the fields below.
	mu sync.Mutex
	// lim holds the slots reserved here; nil until the first. Its limit
	// is one request per delay.
	lim   *rate.Limiter
	delay time.Duration
	// floor is the latest time given to lim: a Limiter reads a time
	// before the last one it was given as that one, so every call is
	// made at floor or later.
	floor time.Time
	// waiting are the requests of this process not yet sent, in arrival
	// order: on slots of lim and, in a fleet, on slots of the store. A
	// Limiter gives a reservation back in full only while it is the
	// latest, so giving one back from the middle of the line cancels
	// the later ones, newest first, and reserves them again, each
	// moving up by one slot; a pause reserves them all again after it.
	waiting []*booking
	// seen is when each member that reserved here stops counting.
	seen map[string]time.Time
	// last is the booking of the latest ReserveSlot, for CancelSlot.
	last *booking

	// The fleet's view, kept by the pacer: the store's epoch last seen
	// ("" before the first answer), the latest store slot this process
	// holds or sent in, the latest slot it sent in, and how many members
	// the store last counted (0: never said).
	epoch               string
	lastStore, lastSent time.Time
	members             int
	// probeAt is when a waiter may next ask the store whether it still
	// holds the slots this process waits on.
	probeAt time.Time
}

// booking is one request's slot in a schedule.
type booking struct {
	at    time.Time
	delay time.Duration
	// rs are the limiter reservations the booking holds: its own slot
	// first, then, while a fleet's store is unavailable, one for each
	// other member, so that the fleet as a whole keeps the pace. Empty
	// for a store's slot and a slot that only a pause holds back.
	rs []*rate.Reservation
	n  int
	// store marks a slot reserved in a Fleet, in epoch.
	store bool
	epoch string
	// alone marks a slot a fleet member reserved here while its store
	// was unavailable: the store is to be told of it once it answers.
	alone bool
	// retake is set when the slot is no longer to be trusted (the store
	// lost it, or it was reserved alone): its waiter reserves anew.
	retake bool
	// wake ends the booking's current sleep, when its slot moves.
	wake context.CancelFunc
}

// busy reports whether s still holds anything back at now: a waiter, a
// pause, or the next slot. It takes s.mu.
func (s *schedule) busy(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting) > 0 || s.next(SlotRequest{Now: now, Interval: s.delay}).After(now)
}

// paused returns the time until which a Retry-After pauses the origin; the
// zero time when none does.
func (s *schedule) paused() time.Time {
	if n := s.pausedUntil.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// pauseUntil holds every slot of s until at least until, booking the
// waiters again after it when that moves the pause.
func (s *schedule) pauseUntil(until, now time.Time) {
	if s.extendPause(until) {
		s.mu.Lock()
		s.rebook(0, false, now)
		s.mu.Unlock()
	}
}

// extendPause makes the pause last until at least until, reporting
// whether it grew: the latest Retry-After never shortens a pause that an
// earlier one asked for.
func (s *schedule) extendPause(until time.Time) bool {
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

// sent records that a request of s goes at its slot at. s.mu is held.
func (s *schedule) sent(at time.Time) {
	s.lastSent = latest(s.lastSent, at)
}

// outageMembers is how many slots a request of s paced without the
// store takes: one for itself and one for each other member the store
// last counted pacing the origin, or when it never said, anyOrigin (the
// count it last gave for any origin); none of them can be told of it.
// It takes s.mu.
func (s *schedule) outageMembers(anyOrigin int) int {
	s.mu.Lock()
	n := s.members
	s.mu.Unlock()
	if n <= 0 {
		n = anyOrigin
	}
	return max(n, 1)
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
// floating point, a few nanoseconds off a whole delay, and a store keeps
// microseconds.
func slotTime(t time.Time) time.Time { return t.Round(time.Microsecond) }

// start returns the earliest time for req before the limiter's own
// reservations: after any pause, after the latest time the limiter was
// given, and an interval after the member's last slot sent. s.mu is
// held.
func (s *schedule) start(req SlotRequest) time.Time {
	t := latest(req.Now, req.NotBefore, s.floor, s.paused())
	if !req.Held.IsZero() {
		t = latest(t, req.Held.Add(req.Interval))
	}
	return t
}

// next returns the slot req would be given, without reserving it. s.mu
// is held.
func (s *schedule) next(req SlotRequest) time.Time {
	t := s.start(req)
	if s.lim != nil && req.Interval > 0 {
		if tokens := s.lim.TokensAt(t); tokens < 1 {
			t = t.Add(time.Duration((1 - tokens) * float64(s.delay)))
		}
	}
	return slotTime(t)
}

// reserve reserves req's slot, taking n slots of the limiter, and counts
// req.Member. The booking is nil when the slot is now and nothing is
// to be given back, or when none was reserved (past req.Limit); the
// caller adds any other to the waiting line. s.mu is held.
func (s *schedule) reserve(req SlotRequest, n int) (*booking, Slot) {
	members := s.count(req)
	t := s.start(req)
	if req.Interval > 0 && n == 1 && len(s.waiting) == 0 && !t.After(req.Now) && s.lim != nil && s.delay == req.Interval && s.lim.AllowN(t, 1) {
		s.floor = t
		return nil, Slot{At: slotTime(t), Reserved: true, Members: members}
	}
	b := &booking{delay: req.Interval, n: n}
	s.book(b, t)
	if !req.Limit.IsZero() && b.at.After(req.Limit) {
		// The newest booking: its slots come back whole.
		s.unbook(b, t)
		return nil, Slot{At: b.at, Members: members}
	}
	slot := Slot{At: b.at, Reserved: true, Members: members}
	if !b.at.After(req.Now) {
		return nil, slot
	}
	return b, slot
}

// count counts req.Member as pacing the origin until its slot's window
// ends, and returns how many members do. s.mu is held.
func (s *schedule) count(req SlotRequest) int {
	if req.Member == "" {
		return 1
	}
	if s.seen == nil {
		s.seen = make(map[string]time.Time, 1)
	}
	until := latest(req.Now, s.floor).Add(MemberWindowFor(req.Interval))
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

// book gives b its slot from t, taking b.n slots of the limiter. s.mu is
// held.
func (s *schedule) book(b *booking, t time.Time) {
	if b.delay <= 0 {
		b.at = slotTime(t)
		return
	}
	if s.lim == nil {
		s.lim, s.delay = rate.NewLimiter(rate.Every(b.delay), 1), b.delay
	} else if s.delay != b.delay {
		s.lim.SetLimitAt(t, rate.Every(b.delay))
		s.delay = b.delay
	}
	b.rs = b.rs[:0]
	for range max(b.n, 1) {
		b.rs = append(b.rs, s.lim.ReserveN(t, 1))
	}
	s.floor = t
	b.at = slotTime(t.Add(b.rs[0].DelayFrom(t)))
}

// unbook gives back the limiter slots of b, newest first. s.mu is held.
func (s *schedule) unbook(b *booking, t time.Time) {
	for _, r := range slices.Backward(b.rs) {
		r.CancelAt(t)
	}
}

// rebook gives back the slots of the bookings waiting from i on, drops
// the one at i when drop is set, and books the others again in their
// order, waking each. A store's slot is woken, not booked: it is the
// store's. s.mu is held.
func (s *schedule) rebook(i int, drop bool, now time.Time) {
	t := latest(now, s.floor)
	for _, b := range slices.Backward(s.waiting[i:]) {
		s.unbook(b, t)
	}
	if drop {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
	for _, b := range s.waiting[i:] {
		if !b.store {
			s.book(b, s.start(SlotRequest{Now: now, Interval: b.delay}))
		}
		if b.wake != nil {
			b.wake()
		}
	}
}

// leave takes b out of the waiting line, once it is sent or gives its
// slot back. s.mu is held.
func (s *schedule) leave(b *booking, gaveUp bool, now time.Time) {
	i := slices.Index(s.waiting, b)
	switch {
	case i < 0:
	case gaveUp && !b.store:
		s.rebook(i, true, now)
	default:
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
}

// aloneAfter is the earliest slot a request paced without the store may
// take, with n members pacing the origin at delay: n delays after the
// last slot this process holds in the store, since the other members may
// have taken the slots in between; the zero time when it holds none.
// s.mu is held.
func (s *schedule) aloneAfter(n int, delay time.Duration) time.Time {
	if s.lastStore.IsZero() {
		return time.Time{}
	}
	return s.lastStore.Add(time.Duration(n) * delay)
}
