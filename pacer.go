package robots

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/crawlkit/robots/policy"
)

// pacer holds every request to its origin's politeness slot: when each
// may next be sent, in the order requests came, and the pauses a
// Retry-After asked for. Each origin has one line of waiters in which
// only the head takes a slot, and takes it when it is about to be handed
// on, through one Pace: the Fleet's when there is one and it answers,
// the process's own localPace otherwise (then, for a fleet member, at
// the delay times the members it last saw). A slot is never held while
// asleep, so a pause that comes meanwhile, from any member, holds it
// back, and the next slot counts from the real send. It is safe for
// concurrent use.
type pacer struct {
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	local  *localPace
	fleet  Fleet  // nil when there is none
	member string // this transport's name among the fleet's members
	logger *slog.Logger
	waited *atomic.Int64 // Stats.Waited, in nanoseconds
	// waiting is Stats.Waiting: the requests waiting for their slot.
	waiting *atomic.Int64

	minDelay, maxCrawlDelay time.Duration
	maxPause                time.Duration

	// pauses shares one read of an origin's stored pause between the
	// unpaced requests that ask at once.
	pauses singleflight.Group

	// members is how many members the store last said pace an origin,
	// whichever: the count for origins this process has no count of.
	members atomic.Int64
	// down reports that the store's last answer was a failure: until it
	// answers again, slots are estimated as the process paces alone.
	down atomic.Bool
	// epochs numbers the epoch tokens this process offers a store.
	epochs atomic.Uint64
	// late is how long, in nanoseconds, this process lately took from
	// asking the store for a slot to having its answer in hand: the
	// spread its store slots are reserved with.
	late atomic.Int64
}

// maxTries bounds how many answers in a row a request takes from a Pace
// that neither reserve its slot nor name a later one: a store that
// answers in the wrong unit must fail the request, not spin.
const maxTries = 8

// minSpread is the least spread of a store slot: the time from asking
// for it to handing the request on that needs no measuring.
const minSpread = 500 * time.Microsecond

// init readies p to hold the schedules of c.maxOrigins origins, four
// times over, and to share the pace in fleet when it is not nil.
func (p *pacer) init(c *config, fleet Fleet, now func() time.Time, sleep func(context.Context, time.Duration) error, waited, waiting *atomic.Int64) {
	p.now, p.sleep, p.logger, p.waited, p.waiting = now, sleep, c.logger, waited, waiting
	p.minDelay, p.maxCrawlDelay, p.maxPause = c.minDelay, c.maxCrawlDelay, c.maxBackoff
	p.fleet = fleet
	p.member = rand.Text()
	p.members.Store(1)
	p.local = newLocalPace(4*c.maxOrigins, now)
}

// scheduleOf returns o's schedule. The origin keeps a pointer to it, so
// the table is searched once per origin held, not once per request.
func (p *pacer) scheduleOf(o *origin) *schedule {
	if s := o.sched.Load(); s != nil {
		return s
	}
	s := p.local.schedule(o.key)
	if !o.sched.CompareAndSwap(nil, s) {
		s = o.sched.Load()
	}
	return s
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
// delay after the origin's previous request was handed on, not during a
// pause, and after every request of the process that came to wait
// before it. now is the time of the request, on the injected clock; the
// waiting itself is Options.Sleep. The head of the line, once its slot
// comes, calls recheck (nil: none) with the time, which may renew the
// robots state that a long wait outlasted and returns the delay that
// then holds, and only then takes its slot, at the moment it is handed
// on.
//
// A request whose slot lies past its context's deadline, less a tenth
// of the time left for the request itself, fails at once, holding no
// slot, with a *SlotError; one whose context ends returns its error,
// and the ones behind it move up. waited is false when the request may
// go at once, so that the caller's now still holds.
func (p *pacer) wait(ctx context.Context, o *origin, delay time.Duration, now time.Time, recheck func(time.Time) (time.Duration, error)) (_ *ticket, err error) {
	s := p.scheduleOf(o)
	if delay <= 0 && !s.paused().After(now) && (p.fleet == nil || !p.paused(ctx, s, now).After(now)) {
		// Nothing to space requests by: no slot to take, no lock.
		return nil, nil
	}
	lim, left := limit(ctx, now)
	w := s.line.join()
	start, waited := now, false
	defer func() {
		if waited {
			p.waited.Add(int64(max(p.now().Sub(start), 0)))
		}
		if err != nil {
			s.line.leave(w)
		}
	}()
	// atLeast is the spread a store slot is asked again with after an
	// answer came past its own: the lateness it measured, twice.
	var atLeast time.Duration
	for tries := 0; ; {
		ahead := s.line.ahead(w)
		at := p.estimate(s, delay, now).Add(time.Duration(ahead) * delay)
		if !lim.IsZero() && at.After(lim) {
			return nil, &SlotError{Origin: string(s.key), At: at, Left: left, wait: at.Sub(now)}
		}
		// Slots are to the microsecond: one that rounds up past now is
		// free now.
		if ahead > 0 || at.After(slotTime(now)) {
			waited = true
			if err := p.sleepIn(ctx, w, ahead == 0, at.Sub(now)); err != nil {
				return nil, err
			}
			now = p.now()
			continue
		}
		if waited && recheck != nil {
			d, err := recheck(now)
			if err != nil {
				return nil, err
			}
			if now = p.now(); d != delay {
				delay = d
				continue
			}
		}
		tk, next, err := p.take(ctx, s, delay, now, atLeast)
		if err == nil && tk.store {
			if late, tooLate := p.tooLateFor(ctx, tk); tooLate {
				// The answer came past the slot's spread: the delay
				// would not hold from the send. Given back, and asked
				// again with a spread the lateness measured fits in,
				// half the delay or not, so that a store that answers
				// slowly still gets the request sent.
				atLeast = 2 * late
				now = p.now()
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		if tk.s != nil {
			tk.w = w
			return &tk, nil
		}
		if now = p.now(); next.After(now) {
			tries = 0
			s.line.heard(next)
			continue
		}
		if tries++; tries >= maxTries {
			return nil, fmt.Errorf("robots: no usable politeness slot for %s after %d tries: the store names no slot it would reserve", s.key, maxTries)
		}
	}
}

// ticket is a request's taken slot, from wait to the moment it is
// handed on (handOn); an unpaced request has none.
type ticket struct {
	s      *schedule
	w      *waiter
	at     time.Time
	delay  time.Duration
	spread time.Duration // the store slot's
	store  bool          // at is a store slot
}

// spread returns the spread to reserve a store slot of delay with: twice
// the lateness lately measured, at least minSpread, at most half the
// delay, so that one late answer does not slow the origin's pace for
// long; a slot asked again after a late answer takes atLeast.
func (p *pacer) spread(delay, atLeast time.Duration) time.Duration {
	return max(min(2*time.Duration(p.late.Load()), delay/2), minSpread, atLeast)
}

// tooLateFor measures how late tk, a store slot just taken, is in hand,
// and reports whether that is past its spread, giving it back then.
// Either way the lateness seen goes into the next spread.
func (p *pacer) tooLateFor(ctx context.Context, tk ticket) (time.Duration, bool) {
	late := max(p.now().Sub(tk.at), 0)
	old := time.Duration(p.late.Load())
	p.late.Store(int64(max(late, old-old/8)))
	if late <= tk.spread {
		return late, false
	}
	p.cancel(ctx, tk.s.key, tk.at.Add(tk.spread), tk.delay+tk.spread)
	return late, true
}

// estimate returns when o's next slot is due as the process knows it,
// asking nothing: an interval after the last slot it sent in, not
// during a pause, not before the store last said; while the store is
// unavailable, at the delay times the members last seen, and the members'
// slots since the process's last one in the store.
func (p *pacer) estimate(s *schedule, delay time.Duration, now time.Time) time.Time {
	req := SlotRequest{Now: now, Interval: delay, NotBefore: s.line.storeNext()}
	if last := s.line.lastStore(); !last.IsZero() {
		// A store slot lasts its spread: the store's next follows that.
		req.NotBefore = latest(req.NotBefore, last.Add(delay))
	}
	if p.fleet != nil && p.down.Load() {
		n := s.line.outageMembers(int(p.members.Load()))
		req.Interval = time.Duration(n) * delay
		req.NotBefore = latest(req.NotBefore, s.line.aloneAfter(n, delay))
	}
	return s.next(req)
}

// take takes the head's slot at now through the Pace, if it is free:
// the Fleet's, or while it does not answer (and with none) the
// process's own, a store slot lasting at least atLeast past it. The
// ticket is the slot taken, to be handed on at once; none is taken when
// the Pace names next as the time the slot is free.
func (p *pacer) take(ctx context.Context, s *schedule, delay time.Duration, now time.Time, atLeast time.Duration) (tk ticket, next time.Time, err error) {
	now = slotTime(now)
	// The process's own pace counts no members: it has only itself.
	req := SlotRequest{Now: now, NotBefore: s.paused(), Interval: delay, Limit: now}
	if p.fleet != nil {
		// The store knows every member's slots but may have lost them:
		// Held is the one it must not lose, this process's last.
		req.Member, req.Held, req.Epoch, req.Spread = p.member, s.lastSlot(), p.epochToken(), p.spread(delay, atLeast)
		slot, err := p.fleet.ReserveSlot(ctx, s.key, req)
		if err == nil {
			p.down.Store(false)
			p.sawMembers(slot.Members)
			s.line.confirm(slot, s.key, p.logger)
			if !slot.Reserved {
				return ticket{}, slot.At, nil
			}
			if slot.At.After(req.Limit) || ctx.Err() != nil {
				// Reserved later than asked, or no longer wanted: not a
				// slot to send in now.
				p.cancel(ctx, s.key, slot.At.Add(req.Spread), delay+req.Spread)
				return ticket{}, time.Time{}, ctx.Err()
			}
			s.line.tookStore(slot.At.Add(req.Spread))
			return ticket{s: s, at: slot.At, delay: delay, spread: req.Spread, store: true}, slot.At, nil
		}
		if callerGaveUp(ctx) {
			return ticket{}, time.Time{}, ctx.Err()
		}
		p.down.Store(true)
		// Every paced request of an outage comes here; the store logs
		// the outage itself at a limited rate.
		p.logger.Debug("robots: store cannot reserve a slot; pacing locally", "origin", s.key, "error", err)
		// The store call took time: the slot counts from now.
		now = slotTime(p.now())
		n := s.line.outageMembers(int(p.members.Load()))
		req = SlotRequest{Now: now, Limit: now, Interval: time.Duration(n) * delay,
			NotBefore: latest(s.paused(), s.line.aloneAfter(n, delay))}
	}
	slot := s.reserve(req)
	if !slot.Reserved {
		return ticket{}, slot.At, nil
	}
	return ticket{s: s, at: slot.At, delay: delay}, slot.At, nil
}

// handOn lets tk's request go now, read as the last thing before it is
// handed to the base: the line moves up and the origin's last slot is
// raised to the send, so the next counts from the real send. (A store
// slot lasts its spread past the slot, which the send came within.)
func (p *pacer) handOn(tk *ticket) {
	if tk == nil {
		return
	}
	// The line moves up first, and the clock is read as close to the
	// base as can be: the send is recorded without the schedule's lock,
	// so that nothing between the reading and the send can wait for the
	// next head reading the schedule, or yield to it.
	tk.s.line.leave(tk.w)
	tk.s.sent(p.now)
}

// cancel gives the store's slot at back; it is only wasted if it cannot
// be.
func (p *pacer) cancel(ctx context.Context, key OriginKey, at time.Time, delay time.Duration) {
	if err := p.fleet.CancelSlot(context.WithoutCancel(ctx), key, at, delay); err != nil {
		p.logger.Warn("robots: store cannot give a slot back", "origin", key, "error", err)
	}
}

// sleepIn sleeps w for d when it is the line's head, or until it is
// woken when it is not: by the line moving, or a pause. A wake ends the
// head's sleep early too. It returns ctx's error when ctx ends.
func (p *pacer) sleepIn(ctx context.Context, w *waiter, head bool, d time.Duration) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	if !head {
		select {
		case <-w.wake:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-w.wake:
			stop()
		case <-sctx.Done():
		}
	}()
	if err := p.sleep(sctx, d); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// epochToken returns a token for a store that has no epoch to take as
// its own: unique per call, so that a store restarted empty never takes
// the epoch it had before.
func (p *pacer) epochToken() string {
	return p.member + "." + strconv.FormatUint(p.epochs.Add(1), 36)
}

// sawMembers keeps the count of members the store gave, for origins
// without a count.
func (p *pacer) sawMembers(n int) {
	if n > 0 {
		p.members.Store(int64(n))
	}
}

// paused returns the end of o's pause as of now: the process's own, and
// with a fleet the one any member stored, read in one round trip shared
// by the unpaced requests that ask while it is under way. A store that
// fails leaves the process's own.
func (p *pacer) paused(ctx context.Context, s *schedule, now time.Time) time.Time {
	if p.fleet == nil || s.paused().After(now) {
		return s.paused()
	}
	ch := p.pauses.DoChan(string(s.key), func() (any, error) {
		// Shared, so not cut short by the first asker's context; the
		// store bounds the call, and each asker stops waiting for it
		// when its own context ends.
		return p.fleet.NextSlot(context.WithoutCancel(ctx), s.key, SlotRequest{Member: p.member, Now: now})
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return s.paused()
	}
	v, err := res.Val, res.Err
	if err != nil {
		p.logger.Debug("robots: store cannot tell a pause; using the process's own", "origin", s.key, "error", err)
		return s.paused()
	}
	if until := v.(time.Time); until.After(now) && s.pauseUntil(until) {
		s.line.wakeAll()
	}
	return s.paused()
}

// pause stops requests to o for as long as a 429 or 503 response's
// Retry-After asks (RFC 9110 section 10.2.3), at most Options.MaxBackoff.
// The pause is kept in o's schedule, waking its line to wait for it, and
// in the store for every member: each takes its slot through the store
// when it is handed on, so the pause holds back even a member asleep
// toward its slot since before it.
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
	if s.pauseUntil(until) {
		s.line.wakeAll()
	}
	if p.fleet != nil {
		if err := p.fleet.Pause(context.WithoutCancel(ctx), s.key, until); err != nil {
			p.logger.Warn("robots: store cannot keep a pause; kept locally", "origin", s.key, "error", err)
		}
	}
	p.logger.Info("robots: origin paused", "origin", s.key, "status", resp.StatusCode, "until", until)
}

// nextFree returns o's next free slot for a request of delay at now,
// reserving nothing: the later of the process's own estimate (its last
// slot, a pause, the members last seen while the store is down), the
// store's answer when there is a fleet and it answers, and a delay for
// each request of the process already waiting.
func (p *pacer) nextFree(ctx context.Context, o *origin, delay time.Duration, now time.Time) time.Time {
	s := p.scheduleOf(o)
	at := p.estimate(s, delay, now)
	if p.fleet != nil && !p.down.Load() {
		req := SlotRequest{Now: now, Interval: delay, NotBefore: s.paused(), Held: s.lastSlot()}
		if stored, err := p.fleet.NextSlot(ctx, s.key, req); err == nil {
			at = latest(at, stored)
		} else if !callerGaveUp(ctx) {
			p.logger.Debug("robots: store cannot tell the next slot; using the process's own", "origin", s.key, "error", err)
			n := s.line.outageMembers(int(p.members.Load()))
			at = latest(at, s.next(SlotRequest{Now: now, Interval: time.Duration(n) * delay, NotBefore: s.line.aloneAfter(n, delay)}))
		}
	}
	return at.Add(time.Duration(s.line.len()) * max(delay, 0))
}

// limit returns the latest slot a request of ctx can use, read at now on
// the injected clock, and the time left before its deadline; the zero
// time when ctx has none. A wait may take all but a tenth of the time
// left, the margin the request itself is given to be sent and answered
// (rate.Limiter.Wait checks the same way, without a margin). Deadlines
// are real time: only the distance is carried onto the injected clock.
func limit(ctx context.Context, now time.Time) (time.Time, time.Duration) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, 0
	}
	left := time.Until(deadline)
	return now.Add(left - left/10), left
}
