package robots

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/crawlkit/robots/policy"
)

// pacer owns the politeness schedule of every origin: when each may next
// be sent a request, in the order requests came, and the pauses a
// Retry-After asked for, in this process and, through a FleetStore, in
// the fleet. Its schedules live in a table of their own, larger than the
// origin table, so that forgetting an origin's parsed robots.txt never
// shortens a wait. It is safe for concurrent use.
type pacer struct {
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	fleet  FleetStore // nil when the store is not shared
	member string     // this transport's name among the fleet's members
	logger *slog.Logger
	waited *atomic.Int64 // Stats.Waited, in nanoseconds
	max    int

	minDelay, maxCrawlDelay time.Duration
	maxPause                time.Duration

	// waiting is Stats.Waiting: the requests asleep until their slot.
	waiting *atomic.Int64

	// pauses shares one read of an origin's stored pause between the
	// unpaced requests that ask at once.
	pauses singleflight.Group

	// members is how many members the store last said pace an origin,
	// whichever: the count for origins this process has no count of.
	members atomic.Int64

	// mu protects table.
	mu    sync.Mutex
	table map[OriginKey]*schedule
}

// minSchedules is the fewest schedules a pacer holds, so that a small
// MaxOrigins does not make pauses short-lived.
const minSchedules = 1024

// schedule is one origin's pace. Slots of this process are reserved on a
// rate.Limiter of one request per delay with a burst of one, in arrival
// order; slots reserved in the fleet's store are recorded beside it, so
// that each kind of slot follows every slot of the other.
type schedule struct {
	key OriginKey
	// pausedUntil is the UnixNano time until which a Retry-After pauses
	// the origin, 0 when none; atomic so that an unpaced request takes no
	// lock.
	pausedUntil atomic.Int64

	// mu protects the fields below.
	mu sync.Mutex
	// lim holds the slots this process reserved by itself; nil until
	// the first. Its limit is one request per delay.
	lim   *rate.Limiter
	delay time.Duration
	// floor is the latest time given to lim: a Limiter reads a time
	// before the last one it was given as that one, so every call is
	// made at floor or later.
	floor time.Time
	// lastShared is the latest slot reserved in the store that this
	// process sent a request in.
	lastShared time.Time
	// members is how many members the store last said pace the origin;
	// 0 when it never said.
	members int
	// waiting are the bookings not yet sent, in arrival order. A
	// Limiter gives a reservation back in full only while it is the
	// latest, so giving one back from the middle of the line cancels
	// the later ones, newest first, and reserves them again, each
	// moving up by one slot; a pause reserves them all again after it.
	waiting []*booking
}

// booking is one request's slot in a schedule.
type booking struct {
	kind  bookingKind
	at    time.Time
	delay time.Duration
	// rs are the local reservations the booking holds: its own slot
	// first, then, while the store is unavailable, one for each other
	// member of the fleet, so that the fleet as a whole keeps the pace.
	rs []*rate.Reservation
	// wake ends the booking's current sleep, when its slot moves.
	wake context.CancelFunc
}

type bookingKind uint8

const (
	local  bookingKind = iota // a slot on the schedule's limiter
	shared                    // a slot reserved in the store
	free                      // no delay: held back by a pause only
)

// init readies p to hold the schedules of c.maxOrigins origins, four
// times over, and to share the pace in store when it is a FleetStore.
func (p *pacer) init(c *config, store any, now func() time.Time, sleep func(context.Context, time.Duration) error, waited *atomic.Int64) {
	p.now, p.sleep, p.logger, p.waited = now, sleep, c.logger, waited
	p.minDelay, p.maxCrawlDelay, p.maxPause = c.minDelay, c.maxCrawlDelay, c.maxBackoff
	p.fleet, _ = store.(FleetStore)
	p.member = rand.Text()
	p.members.Store(1)
	p.max = max(4*c.maxOrigins, minSchedules)
	p.table = make(map[OriginKey]*schedule)
}

// scheduleOf returns o's schedule. The origin keeps a pointer to it, so
// the table is searched once per origin held, not once per request.
func (p *pacer) scheduleOf(o *origin) *schedule {
	if s := o.sched.Load(); s != nil {
		return s
	}
	s := p.schedule(o.key)
	if !o.sched.CompareAndSwap(nil, s) {
		s = o.sched.Load()
	}
	return s
}

// schedule returns the schedule of key, making one if needed. When the
// table is full, the schedules that no longer hold anything back are
// dropped; if none is, the one whose hold ends first goes.
func (p *pacer) schedule(key OriginKey) *schedule {
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
	return s
}

// evict drops every expired schedule, or else the one whose hold ends
// first, idle ones before those with waiters. p.mu is held.
func (p *pacer) evict(now time.Time) {
	var victim *schedule
	var victimEnd time.Time
	victimBusy := true
	for key, s := range p.table {
		s.mu.Lock()
		busy, end := len(s.waiting) > 0, s.next(now, s.delay)
		s.mu.Unlock()
		if !busy && !end.After(now) {
			delete(p.table, key)
			continue
		}
		if victim == nil || victimBusy && !busy || busy == victimBusy && end.Before(victimEnd) {
			victim, victimEnd, victimBusy = s, end, busy
		}
	}
	if len(p.table) >= p.max && victim != nil {
		delete(p.table, victim.key)
	}
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
// floating point, a few nanoseconds off a whole delay, and the store keeps
// microseconds.
func slotTime(t time.Time) time.Time { return t.Round(time.Microsecond) }

// start returns the earliest time from now that a request with delay,
// taking n slots, may be given a slot, before the limiter's own
// reservations: after any pause, after the latest time the limiter was
// given, and after every store slot of this process, sent or waited for,
// by n delays: while the store is unavailable, the other members may have
// taken the slots in between. s.mu is held.
func (s *schedule) start(now time.Time, delay time.Duration, n int) time.Time {
	t := latest(now, s.floor, s.paused())
	gap := time.Duration(n) * delay
	if !s.lastShared.IsZero() {
		t = latest(t, s.lastShared.Add(gap))
	}
	for _, b := range s.waiting {
		if b.kind == shared {
			t = latest(t, b.at.Add(gap))
		}
	}
	return t
}

// next returns the earliest slot from now a request with delay would be
// given, without reserving it: the process's own next send time. s.mu is
// held.
func (s *schedule) next(now time.Time, delay time.Duration) time.Time {
	t := s.start(now, delay, 1)
	if s.lim != nil && delay > 0 {
		if tokens := s.lim.TokensAt(t); tokens < 1 {
			t = t.Add(time.Duration((1 - tokens) * float64(s.delay)))
		}
	}
	return slotTime(t)
}

// book gives b its slot from t, taking n slots of the limiter when b is
// local. s.mu is held.
func (s *schedule) book(b *booking, t time.Time, n int) {
	if b.kind == free {
		b.at = t
		return
	}
	if s.lim == nil {
		s.lim, s.delay = rate.NewLimiter(rate.Every(b.delay), 1), b.delay
	} else if s.delay != b.delay {
		s.lim.SetLimitAt(t, rate.Every(b.delay))
		s.delay = b.delay
	}
	b.rs = b.rs[:0]
	for range n {
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
// order, waking each. s.mu is held.
func (s *schedule) rebook(i int, drop bool, now time.Time) {
	t := latest(now, s.floor)
	for _, b := range slices.Backward(s.waiting[i:]) {
		s.unbook(b, t)
	}
	if drop {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
	for _, b := range s.waiting[i:] {
		if b.kind != shared {
			n := max(len(b.rs), 1)
			s.book(b, s.start(now, b.delay, n), n)
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
	case gaveUp:
		s.rebook(i, true, now)
	default:
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
}

// delayFor returns the least time between two requests to an origin whose
// robots.txt holds the crawler to agent: Options.MinDelay, raised by the
// Crawl-delay of the crawler's groups up to Options.MaxCrawlDelay.
// Crawl-delay is not part of RFC 9309; it paces requests and never decides
// them.
func (p *pacer) delayFor(agent policy.Agent) time.Duration {
	d := p.minDelay
	if p.maxCrawlDelay > 0 {
		if cd, ok := agent.CrawlDelay(); ok {
			d = max(d, min(cd, p.maxCrawlDelay))
		}
	}
	return d
}

// wait holds a request to o until its politeness slot: no sooner than
// delay after the origin's previous request, not during a pause, and
// after every request that came to wait before it. now is the time of the
// request, on the injected clock; the waiting itself is Options.Sleep.
// With a shared store the slot is the fleet's, and an unpaced request
// asks it for the fleet's pause; while the store is unavailable, the
// process paces alone at the delay times the members it last saw.
//
// When ctx ends, the request gives its slot back at once, and the ones
// behind it move up whatever the order in which contexts end. A request
// whose slot lies past its context's deadline, less a tenth of the time
// left for the request itself, fails at once, holding no slot, with an
// error that matches context.DeadlineExceeded. Deadlines are real time;
// only the distance to them is compared with the injected clock's.
// waited is false when the request may go at once, so that the caller's
// now still holds.
func (p *pacer) wait(ctx context.Context, o *origin, delay time.Duration, now time.Time) (waited bool, err error) {
	s := p.scheduleOf(o)
	if delay <= 0 {
		if p.fleet != nil && !s.paused().After(now) {
			p.fleetPause(ctx, s, now)
		}
		if !s.paused().After(now) {
			// Nothing to space requests by: no slot to take, no lock.
			return false, nil
		}
	}
	n := 1
	if p.fleet != nil {
		if handled, waited, err := p.waitShared(ctx, s, delay, now); handled {
			return waited, err
		}
		// The store call took time: the slot counts from now, not from
		// before it.
		now, n = p.now(), p.outageMembers(s)
	}
	return p.waitLocal(ctx, s, delay, n, now)
}

// fleetPause reads the pause any member of the fleet stored for s into
// s: one round trip, shared by the requests to the origin that ask while
// it is under way. A store that fails leaves the process's own pause, if
// any.
func (p *pacer) fleetPause(ctx context.Context, s *schedule, now time.Time) {
	v, err, _ := p.pauses.Do(string(s.key), func() (any, error) {
		// Shared, so not cut short by the first asker's context; the
		// store bounds the call.
		return p.fleet.PausedUntil(context.WithoutCancel(ctx), s.key)
	})
	if err != nil {
		p.logger.Debug("robots: store cannot tell a pause; using the process's own", "origin", s.key, "error", err)
		return
	}
	if until := v.(time.Time); until.After(now) {
		s.pauseUntil(until, now)
	}
}

// outageMembers is how many slots a request paced without the store
// takes: one for itself and one for each other member last seen pacing
// its origin (or any origin), which cannot be told of it.
func (p *pacer) outageMembers(s *schedule) int {
	s.mu.Lock()
	n := s.members
	s.mu.Unlock()
	if n <= 0 {
		n = int(p.members.Load())
	}
	return max(n, 1)
}

// waitLocal is wait on the transport's own schedule, the request taking
// n slots of it.
func (p *pacer) waitLocal(ctx context.Context, s *schedule, delay time.Duration, n int, now time.Time) (waited bool, err error) {
	start := now
	b := &booking{kind: local, delay: delay}
	if delay <= 0 {
		b.kind = free
	}
	s.mu.Lock()
	t := s.start(now, delay, n)
	if b.kind == local && n == 1 && len(s.waiting) == 0 && !t.After(now) && s.lim != nil && s.delay == delay && s.lim.AllowN(t, 1) {
		// The slot is now: nothing to give back later, no booking.
		s.floor = t
		s.mu.Unlock()
		return false, nil
	}
	s.book(b, t, n)
	if !b.at.After(now) {
		s.mu.Unlock()
		return false, nil
	}
	if err := fits(ctx, s.key, b.at.Sub(now)); err != nil {
		// The newest booking: its slots come back whole.
		s.unbook(b, t)
		s.mu.Unlock()
		return true, err
	}
	s.waiting = append(s.waiting, b)
	s.mu.Unlock()
	err = p.sleepUntil(ctx, s, b)
	p.waitedSince(start)
	return true, err
}

// sleepUntil waits until b's slot, which may move while it waits, and
// takes b out of the line; when ctx ends or the moved slot no longer fits
// the deadline, b gives its slot back.
func (p *pacer) sleepUntil(ctx context.Context, s *schedule, b *booking) error {
	for {
		now := p.now()
		s.mu.Lock()
		d := b.at.Sub(now)
		if d <= 0 {
			s.leave(b, false, now)
			s.mu.Unlock()
			return nil
		}
		// A pause may have moved the slot since it was booked.
		if err := fits(ctx, s.key, d); err != nil {
			s.leave(b, true, now)
			s.mu.Unlock()
			return err
		}
		moved, err := p.sleepBooked(ctx, s, b, d)
		if err != nil && !moved {
			s.mu.Lock()
			s.leave(b, true, p.now())
			s.mu.Unlock()
			return err
		}
	}
}

// sleepBooked sleeps d for booking b, called with s.mu held and
// returning with it released. A change of the schedule that moves b's
// slot wakes it early: moved then reports that the sleep ended for that
// reason, not because ctx ended.
func (p *pacer) sleepBooked(ctx context.Context, s *schedule, b *booking, d time.Duration) (moved bool, err error) {
	sctx, wake := context.WithCancel(ctx)
	b.wake = wake
	s.mu.Unlock()
	p.waiting.Add(1)
	err = p.sleep(sctx, d)
	p.waiting.Add(-1)
	moved = sctx.Err() != nil && ctx.Err() == nil
	wake()
	return moved, err
}

// waitedSince counts the time since start, on the injected clock, as
// waited.
func (p *pacer) waitedSince(start time.Time) {
	p.waited.Add(int64(max(p.now().Sub(start), 0)))
}

// fits returns nil when a wait of d leaves ctx a tenth of the time left
// before its deadline, and otherwise the error that the slot is too late.
// A tenth is the margin that the request itself is given to be sent and
// answered; rate.Limiter.Wait checks the same way, without a margin.
func fits(ctx context.Context, key OriginKey, d time.Duration) error {
	deadline, ok := ctx.Deadline()
	if !ok || d <= 0 {
		return nil
	}
	left := time.Until(deadline)
	if d <= left-left/10 {
		return nil
	}
	return tooLate(key, d, left)
}

func tooLate(key OriginKey, d, left time.Duration) error {
	return fmt.Errorf("robots: the politeness slot for %s is %v away, past the request's deadline (%v left): %w",
		key, d, left.Round(time.Millisecond), context.DeadlineExceeded)
}

// waitShared is wait on the store's slot reservation: one round trip. The
// slot is never earlier than the process's own next one, so that a store
// that lost its slots (restarted empty) does not send this process's
// requests closer than the delay. handled is false when the store failed
// and the request is to be paced locally; waited is as for wait.
func (p *pacer) waitShared(ctx context.Context, s *schedule, delay time.Duration, now time.Time) (handled, waited bool, err error) {
	start := now
	for {
		s.mu.Lock()
		notBefore := s.next(now, delay)
		s.mu.Unlock()
		req := SlotRequest{Member: p.member, Now: now, NotBefore: notBefore, Interval: delay}
		var left time.Duration
		if deadline, has := ctx.Deadline(); has {
			left = time.Until(deadline)
			req.Limit = now.Add(left - left/10)
		}
		slot, err := p.fleet.ReserveSlot(ctx, s.key, req)
		if err != nil {
			if ctx.Err() != nil {
				return true, now != start, ctx.Err()
			}
			// Every paced request of an outage comes here; the store
			// logs the outage itself at a limited rate.
			p.logger.Debug("robots: store cannot reserve a slot; pacing locally", "origin", s.key, "error", err)
			return false, now != start, nil
		}
		p.sawMembers(s, slot.Members)
		d := slot.At.Sub(now)
		if !slot.Reserved {
			return true, now != start, tooLate(s.key, d, left)
		}
		if d <= 0 {
			s.mu.Lock()
			s.lastShared = latest(s.lastShared, slot.At)
			s.mu.Unlock()
			return true, now != start, nil
		}
		b := &booking{kind: shared, at: slot.At, delay: delay}
		s.mu.Lock()
		s.waiting = append(s.waiting, b)
		s.mu.Unlock()
		again, err := p.sleepShared(ctx, s, b)
		if !again {
			p.waitedSince(start)
			return true, true, err
		}
		// A pause came while it waited: the slot goes back and a new
		// one is reserved after the pause.
		p.cancelShared(ctx, s.key, b)
		now = p.now()
	}
}

// sleepShared waits until b's slot in the store. again is true when a
// pause came while it waited, and the slot is to be reserved anew.
func (p *pacer) sleepShared(ctx context.Context, s *schedule, b *booking) (again bool, err error) {
	for {
		now := p.now()
		s.mu.Lock()
		if s.paused().After(b.at) {
			s.leave(b, false, now)
			s.mu.Unlock()
			return true, nil
		}
		d := b.at.Sub(now)
		if d <= 0 {
			s.leave(b, false, now)
			s.lastShared = latest(s.lastShared, b.at)
			s.mu.Unlock()
			return false, nil
		}
		moved, err := p.sleepBooked(ctx, s, b, d)
		if err != nil && !moved {
			s.mu.Lock()
			s.leave(b, false, p.now())
			s.mu.Unlock()
			p.cancelShared(ctx, s.key, b)
			return false, err
		}
	}
}

// cancelShared gives b's slot back to the store; it is only wasted if
// it cannot be.
func (p *pacer) cancelShared(ctx context.Context, key OriginKey, b *booking) {
	if err := p.fleet.CancelSlot(context.WithoutCancel(ctx), key, b.at, b.delay); err != nil {
		p.logger.Warn("robots: store cannot give a slot back", "origin", key, "error", err)
	}
}

// sawMembers keeps the count of members the store gave, for s and for
// origins without a count.
func (p *pacer) sawMembers(s *schedule, n int) {
	if n <= 0 {
		return
	}
	p.members.Store(int64(n))
	s.mu.Lock()
	s.members = n
	s.mu.Unlock()
}

// pause stops requests to o for as long as a 429 or 503 response's
// Retry-After asks (RFC 9110 section 10.2.3), at most Options.MaxBackoff.
// The pause is kept in o's schedule, moving every slot booked before it
// to after it, and in the store when it is shared.
func (p *pacer) pause(ctx context.Context, o *origin, resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	now := p.now()
	d := min(retryAfter(resp.Header, now), p.maxPause)
	if d <= 0 {
		return
	}
	s := p.scheduleOf(o)
	until := now.Add(d)
	s.pauseUntil(until, now)
	if p.fleet != nil {
		if err := p.fleet.Pause(context.WithoutCancel(ctx), s.key, until); err != nil {
			p.logger.Warn("robots: store cannot keep a pause; kept locally", "origin", s.key, "error", err)
		}
	}
	p.logger.Info("robots: origin paused", "origin", s.key, "status", resp.StatusCode, "until", until)
}
