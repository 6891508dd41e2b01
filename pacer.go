package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/robots/policy"
)

// pacer owns the politeness schedule of every origin: when each may next
// be sent a request, which requests wait for it and in what order, and
// the pauses a Retry-After asked for. Its schedules live in a table of
// their own, larger than the origin table, so that forgetting an origin's
// parsed robots.txt never shortens a wait. It is safe for concurrent use.
type pacer struct {
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	slots  SlotReserver // nil when the store cannot reserve slots
	logger *slog.Logger
	waited *atomic.Int64 // Stats.Waited, in nanoseconds
	max    int

	minDelay, maxCrawlDelay time.Duration
	maxPause                time.Duration

	// mu protects table.
	mu    sync.Mutex
	table map[string]*schedule
}

// minSchedules is the fewest schedules a pacer holds, so that a small
// MaxOrigins does not make pauses short-lived.
const minSchedules = 1024

// schedule is one origin's pace: a queue of waiters served in arrival
// order, each no sooner than its delay after the request let go before it
// and not during a pause.
type schedule struct {
	key string
	// pausedUntil is the UnixNano time until which a Retry-After pauses
	// the origin, 0 when none; atomic so that an unpaced request takes no
	// lock.
	pausedUntil atomic.Int64

	// mu protects the fields below.
	mu    sync.Mutex
	last  time.Time     // when the latest request was let go
	delay time.Duration // that request's delay
	queue []*waiter     // in arrival order; the first is the one to go next
}

// waiter is one request waiting in a schedule's queue.
type waiter struct {
	delay time.Duration
	// turn is closed when the waiter comes first in the queue.
	turn chan struct{}
}

// init readies p to hold the schedules of c.maxOrigins origins, four
// times over, and to reserve slots in store when it is a SlotReserver.
func (p *pacer) init(c *config, store any, now func() time.Time, sleep func(context.Context, time.Duration) error, waited *atomic.Int64) {
	p.now, p.sleep, p.logger, p.waited = now, sleep, c.logger, waited
	p.minDelay, p.maxCrawlDelay, p.maxPause = c.minDelay, c.maxCrawlDelay, c.maxBackoff
	p.slots, _ = store.(SlotReserver)
	p.max = max(4*c.maxOrigins, minSchedules)
	p.table = make(map[string]*schedule)
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
func (p *pacer) schedule(key string) *schedule {
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
		busy, end := len(s.queue) > 0, s.holdsUntil()
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

// holdsUntil is the time before which the schedule holds a request back.
// s.mu is held.
func (s *schedule) holdsUntil() time.Time {
	end := s.last.Add(s.delay)
	if pause := s.paused(); pause.After(end) {
		end = pause
	}
	return end
}

// paused returns the time until which a Retry-After pauses the origin; the
// zero time when none does.
func (s *schedule) paused() time.Time {
	if n := s.pausedUntil.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// slot returns the earliest time after now that a request with delay may
// go, ignoring any queue. s.mu is held.
func (s *schedule) slot(delay time.Duration, now time.Time) time.Time {
	at := now
	if !s.last.IsZero() {
		if next := s.last.Add(delay); next.After(at) {
			at = next
		}
	}
	if pause := s.paused(); pause.After(at) {
		at = pause
	}
	return at
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
//
// When ctx ends, the request leaves the queue at once, and the ones
// behind it move up whatever the order in which contexts end. A request
// whose slot lies past its context's deadline, less a tenth of the time
// left for the request itself, fails at once, holding no slot, with an
// error that matches context.DeadlineExceeded. Deadlines are real time;
// only the distance to them is compared with the injected clock's.
// waited is false when the request may go at once, so that the caller's
// now still holds.
func (p *pacer) wait(ctx context.Context, o *origin, delay time.Duration, now time.Time) (waited bool, err error) {
	s := p.scheduleOf(o)
	if delay <= 0 && !s.paused().After(now) {
		// Nothing to space requests by: no slot to take, no lock.
		return false, nil
	}
	if p.slots != nil {
		if handled, waited, err := p.waitShared(ctx, s, delay, now); handled {
			return waited, err
		}
	}
	return p.waitLocal(ctx, s, delay, now)
}

// waitLocal is wait on the transport's own schedule.
func (p *pacer) waitLocal(ctx context.Context, s *schedule, delay time.Duration, now time.Time) (waited bool, err error) {
	start := now
	s.mu.Lock()
	at := s.slot(delay, now)
	if len(s.queue) == 0 && !at.After(now) {
		s.last, s.delay = now, delay
		s.mu.Unlock()
		return false, nil
	}
	// Behind every request already waiting, each a delay apart.
	if err := fits(ctx, s.key, at.Sub(now)+time.Duration(len(s.queue))*delay); err != nil {
		s.mu.Unlock()
		return true, err
	}
	w := &waiter{delay: delay, turn: make(chan struct{})}
	s.queue = append(s.queue, w)
	first := len(s.queue) == 1
	s.mu.Unlock()
	if !first {
		select {
		case <-w.turn:
		case <-ctx.Done():
			s.leave(w)
			p.waitedSince(start)
			return true, ctx.Err()
		}
	}
	for {
		now = p.now()
		s.mu.Lock()
		at := s.slot(w.delay, now)
		if !at.After(now) {
			s.last, s.delay = now, w.delay
			s.leaveLocked(w)
			s.mu.Unlock()
			p.waitedSince(start)
			return true, nil
		}
		s.mu.Unlock()
		// A pause may have come since the request joined the queue.
		err := fits(ctx, s.key, at.Sub(now))
		if err == nil {
			err = p.sleep(ctx, at.Sub(now))
		}
		if err != nil {
			s.leave(w)
			p.waitedSince(start)
			return true, err
		}
	}
}

// waitedSince counts the time since start, on the injected clock, as
// waited.
func (p *pacer) waitedSince(start time.Time) {
	p.waited.Add(int64(max(p.now().Sub(start), 0)))
}

// leave takes w out of the queue, handing the turn on if it had it.
func (s *schedule) leave(w *waiter) {
	s.mu.Lock()
	s.leaveLocked(w)
	s.mu.Unlock()
}

// leaveLocked is leave with s.mu held.
func (s *schedule) leaveLocked(w *waiter) {
	i := slices.Index(s.queue, w)
	if i < 0 {
		return
	}
	s.queue = slices.Delete(s.queue, i, i+1)
	if i == 0 && len(s.queue) > 0 {
		close(s.queue[0].turn)
	}
}

// fits returns nil when a wait of d leaves ctx a tenth of the time left
// before its deadline, and otherwise the error that the slot is too late.
// A tenth is the margin that the request itself is given to be sent and
// answered; rate.Limiter.Wait checks the same way, without a margin.
func fits(ctx context.Context, key string, d time.Duration) error {
	deadline, ok := ctx.Deadline()
	if !ok || d <= 0 {
		return nil
	}
	left := time.Until(deadline)
	if d <= left-left/10 {
		return nil
	}
	return fmt.Errorf("robots: the politeness slot for %s is %v away, past the request's deadline (%v left): %w",
		key, d, left.Round(time.Millisecond), context.DeadlineExceeded)
}

// waitShared is wait on the store's slot reservation. handled is false
// when the store failed and the request is to be paced locally; waited is
// as for wait.
func (p *pacer) waitShared(ctx context.Context, s *schedule, delay time.Duration, now time.Time) (handled, waited bool, err error) {
	from := now
	if pause := s.paused(); pause.After(from) {
		from = pause
	}
	var limit time.Time
	if deadline, has := ctx.Deadline(); has {
		left := time.Until(deadline)
		limit = now.Add(left - left/10)
	}
	at, reserved, err := p.slots.ReserveSlot(ctx, s.key, from, delay, limit)
	if err != nil {
		p.logger.Warn("robots: store cannot reserve a slot; pacing locally", "origin", s.key, "error", err)
		return false, false, nil
	}
	d := at.Sub(now)
	if !reserved {
		return true, false, fits(ctx, s.key, d)
	}
	if d <= 0 {
		return true, false, nil
	}
	if err := p.sleep(ctx, d); err != nil {
		// The slot is only wasted if it cannot be given back.
		if cerr := p.slots.CancelSlot(context.WithoutCancel(ctx), s.key, at, delay); cerr != nil {
			p.logger.Warn("robots: store cannot give a slot back", "origin", s.key, "error", cerr)
		}
		p.waitedSince(now)
		return true, true, err
	}
	p.waited.Add(int64(d))
	return true, true, nil
}

// pause stops requests to o for as long as a 429 or 503 response's
// Retry-After asks (RFC 9110 section 10.2.3), at most Options.MaxBackoff.
// The pause is kept in o's schedule, and in the store when it reserves
// slots.
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
	for {
		// Only ever extend a pause: the latest Retry-After does not
		// shorten one that an earlier response asked for.
		cur := s.pausedUntil.Load()
		if until.UnixNano() <= cur || s.pausedUntil.CompareAndSwap(cur, until.UnixNano()) {
			break
		}
	}
	if p.slots != nil {
		if err := p.slots.Pause(context.WithoutCancel(ctx), s.key, until); err != nil {
			p.logger.Warn("robots: store cannot keep a pause; kept locally", "origin", s.key, "error", err)
		}
	}
	p.logger.Info("robots: origin paused", "origin", s.key, "status", resp.StatusCode, "until", until)
}
