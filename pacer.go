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
// Retry-After asked for. The slots are a Pace's: its own localPace, and
// in a fleet the Fleet's, the localPace then standing in while the
// store is unavailable. It is safe for concurrent use.
type pacer struct {
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	local  *localPace
	fleet  Fleet // nil when the store is not shared
	member string     // this transport's name among the fleet's members
	logger *slog.Logger
	waited *atomic.Int64 // Stats.Waited, in nanoseconds
	// waiting is Stats.Waiting: the requests asleep until their slot.
	waiting *atomic.Int64

	minDelay, maxCrawlDelay time.Duration
	maxPause                time.Duration

	// pauses shares one read of an origin's stored pause between the
	// unpaced requests that ask at once.
	pauses singleflight.Group

	// members is how many members the store last said pace an origin,
	// whichever: the count for origins this process has no count of.
	members atomic.Int64
	// epochs numbers the epoch tokens this process offers a store.
	epochs atomic.Uint64
}

// maxTries bounds how many slots one request reserves before it gives up:
// a slot is reserved again when a pause came while it waited or the store
// lost it, and a store whose every slot is unusable (one that answers
// a pause in the wrong unit, say) must fail the request, not spin.
const maxTries = 8

// init readies p to hold the schedules of c.maxOrigins origins, four
// times over, and to share the pace in fleet when it is not nil.
func (p *pacer) init(c *config, fleet Fleet, now func() time.Time, sleep func(context.Context, time.Duration) error, waited *atomic.Int64) {
	p.now, p.sleep, p.logger, p.waited = now, sleep, c.logger, waited
	p.minDelay, p.maxCrawlDelay, p.maxPause = c.minDelay, c.maxCrawlDelay, c.maxBackoff
	p.fleet = fleet
	p.member = rand.Text()
	p.members.Store(1)
	p.local = newLocalPace(4*c.maxOrigins, now)
}

// schedule returns the schedule of key.
func (p *pacer) schedule(key OriginKey) *schedule { return p.local.schedule(key) }

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

func tooLate(key OriginKey, at time.Time, d, left time.Duration) error {
	return &SlotError{Origin: string(key), At: at, Left: left, wait: d}
}

// budget returns the time left before ctx's deadline and the part of it
// a wait may take: all but a tenth, the margin the request itself is
// given to be sent and answered (rate.Limiter.Wait checks the same way,
// without a margin). ok is false when ctx has no deadline. Deadlines are
// real time: only these distances are carried onto the injected clock.
func budget(ctx context.Context) (left, usable time.Duration, ok bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0, 0, false
	}
	left = time.Until(deadline)
	return left, left - left/10, true
}

// limit returns the latest slot a request of ctx can use, read at now on
// the injected clock, and the time left before its deadline; the zero
// time when ctx has none.
func limit(ctx context.Context, now time.Time) (time.Time, time.Duration) {
	left, usable, ok := budget(ctx)
	if !ok {
		return time.Time{}, 0
	}
	return now.Add(usable), left
}

// fits returns nil when a wait of d fits in ctx's budget, and otherwise
// the error that the slot at is too late.
func fits(ctx context.Context, key OriginKey, at time.Time, d time.Duration) error {
	left, usable, ok := budget(ctx)
	if !ok || d <= 0 || d <= usable {
		return nil
	}
	return tooLate(key, at, d, left)
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
// left for the request itself, fails at once, holding no slot, with a
// *SlotError. waited is false when the request may go at once, so that
// the caller's now still holds.
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
	start := now
	for range maxTries {
		b, err := p.reserve(ctx, s, delay, now)
		if err != nil || b == nil {
			return now != start, err
		}
		again, err := p.sleepUntil(ctx, s, b)
		if !again {
			p.waitedSince(start)
			return true, err
		}
		now = p.now()
	}
	return true, fmt.Errorf("robots: no usable politeness slot for %s after %d tries: the store's slots keep falling in a pause or getting lost", s.key, maxTries)
}

// reserve reserves the request's slot, in the store when there is one
// and it answers, in s otherwise, and puts it in the waiting line. The
// booking is nil when the request may go at once.
func (p *pacer) reserve(ctx context.Context, s *schedule, delay time.Duration, now time.Time) (*booking, error) {
	lim, left := limit(ctx, now)
	req := SlotRequest{Member: p.member, Now: now, Interval: delay, Limit: lim}
	n := 1
	if p.fleet != nil {
		// The store knows every slot of the fleet, this process's
		// included, but may have lost them: Held is the one it must not
		// lose, the last this process sent in.
		s.mu.Lock()
		req.NotBefore, req.Held, req.Epoch = s.paused(), s.lastSent, p.epochToken()
		s.mu.Unlock()
		slot, err := p.fleet.ReserveSlot(ctx, s.key, req)
		if err == nil {
			return p.bookStore(s, slot, req, left)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Every paced request of an outage comes here; the store logs
		// the outage itself at a limited rate.
		p.logger.Debug("robots: store cannot reserve a slot; pacing locally", "origin", s.key, "error", err)
		// The store call took time: the slot counts from now, not from
		// before it.
		now = p.now()
		req.Now, n = now, s.outageMembers(int(p.members.Load()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.fleet != nil {
		req.NotBefore = latest(req.NotBefore, s.aloneAfter(n, delay))
	}
	b, slot := s.reserve(req, n)
	if !slot.Reserved {
		return nil, tooLate(s.key, slot.At, slot.At.Sub(now), left)
	}
	if b == nil {
		s.sent(slot.At)
		return nil, nil
	}
	b.alone = p.fleet != nil
	s.waiting = append(s.waiting, b)
	return b, nil
}

// bookStore takes the store's answer slot to req: a slot to wait for, or
// the error that it lies past the deadline. A store found to have lost
// its state (a new epoch) or back after this process paced alone has the
// slots this process holds from before reserved anew. s.mu is not held.
func (p *pacer) bookStore(s *schedule, slot Slot, req SlotRequest, left time.Duration) (*booking, error) {
	p.sawMembers(slot.Members)
	s.mu.Lock()
	defer s.mu.Unlock()
	p.confirm(s, slot, req.Now, req.Interval)
	if !slot.Reserved {
		return nil, tooLate(s.key, slot.At, slot.At.Sub(req.Now), left)
	}
	s.lastStore = latest(s.lastStore, slot.At)
	if !slot.At.After(req.Now) {
		s.sent(slot.At)
		return nil, nil
	}
	b := &booking{at: slot.At, delay: req.Interval, store: true, epoch: slot.Epoch}
	s.waiting = append(s.waiting, b)
	return b, nil
}

// confirm takes slot, the store's answer at now to a request of delay,
// as its word on s: its member count and epoch, not to be asked again
// for a delay. The slots this process holds that the store does not
// know (from an earlier epoch, or reserved alone) are to be reserved
// again through it. s.mu is held.
func (p *pacer) confirm(s *schedule, slot Slot, now time.Time, delay time.Duration) {
	if slot.Members > 0 {
		s.members = slot.Members
	}
	s.probeAt = latest(s.probeAt, now.Add(delay))
	lost := s.epoch != "" && slot.Epoch != s.epoch
	s.epoch = slot.Epoch
	for _, b := range s.waiting {
		if b.alone || b.store && lost && b.epoch != slot.Epoch {
			b.retake = true
			if b.wake != nil {
				b.wake()
			}
		}
	}
}

// epochToken returns a token for a store that has no epoch to take as
// its own: unique per call, so that a store restarted empty never takes
// the epoch it had before.
func (p *pacer) epochToken() string {
	return p.member + "." + strconv.FormatUint(p.epochs.Add(1), 36)
}

// sleepUntil waits until b's slot, which may move while it waits, and
// takes b out of the line. When ctx ends or the moved slot no longer
// fits the deadline, b gives its slot back. again reports that b's slot
// is no longer to be used (a pause came after it, or the store lost it)
// and a new one is to be reserved.
func (p *pacer) sleepUntil(ctx context.Context, s *schedule, b *booking) (again bool, err error) {
	for {
		now := p.now()
		s.mu.Lock()
		checks := p.fleet != nil && (b.store || b.alone) && b.delay > 0
		if checks && !now.Before(s.probeAt) && b.at.After(now) {
			// A store may lose the slots it granted (a restart without
			// persistence), and one that was unavailable does not know
			// the slots reserved alone: a line waiting on such slots asks
			// it once a delay whether it answers, and with which epoch,
			// unless a reservation just told. When it lost them or is
			// back, they are reserved again through it.
			s.probeAt = now.Add(b.delay)
			s.mu.Unlock()
			p.probe(ctx, s, now, b.delay)
			// The call took time.
			now = p.now()
			s.mu.Lock()
		}
		if b.retake || b.store && s.paused().After(b.at) {
			s.leave(b, true, now)
			s.mu.Unlock()
			if !b.retake {
				p.cancelStore(ctx, s.key, b)
			}
			return true, nil
		}
		d := b.at.Sub(now)
		if d <= 0 {
			s.leave(b, false, now)
			s.sent(b.at)
			s.mu.Unlock()
			return false, nil
		}
		// A pause may have moved the slot since it was booked.
		if err := fits(ctx, s.key, b.at, d); err != nil {
			s.leave(b, true, now)
			s.mu.Unlock()
			p.cancelStore(ctx, s.key, b)
			return false, err
		}
		if checks {
			d = min(d, max(s.probeAt.Sub(now), time.Millisecond))
		}
		moved, err := p.sleepBooked(ctx, s, b, d)
		if err != nil && !moved {
			s.mu.Lock()
			s.leave(b, true, p.now())
			s.mu.Unlock()
			p.cancelStore(ctx, s.key, b)
			return false, err
		}
	}
}

// probe asks the store whether it answers, and with which epoch,
// reserving nothing (a Limit before Now).
func (p *pacer) probe(ctx context.Context, s *schedule, now time.Time, delay time.Duration) {
	s.mu.Lock()
	req := SlotRequest{Member: p.member, Now: now, Interval: delay, Limit: now.Add(-time.Microsecond), Held: s.lastSent, Epoch: p.epochToken()}
	s.mu.Unlock()
	slot, err := p.fleet.ReserveSlot(ctx, s.key, req)
	if err != nil {
		return
	}
	p.sawMembers(slot.Members)
	s.mu.Lock()
	p.confirm(s, slot, now, delay)
	s.mu.Unlock()
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

// cancelStore gives b's slot back to the store when it is the store's;
// it is only wasted if it cannot be.
func (p *pacer) cancelStore(ctx context.Context, key OriginKey, b *booking) {
	if !b.store {
		return
	}
	if err := p.fleet.CancelSlot(context.WithoutCancel(ctx), key, b.at, b.delay); err != nil {
		p.logger.Warn("robots: store cannot give a slot back", "origin", key, "error", err)
	}
}

// waitedSince counts the time since start, on the injected clock, as
// waited.
func (p *pacer) waitedSince(start time.Time) {
	p.waited.Add(int64(max(p.now().Sub(start), 0)))
}

// fleetPause reads the pause any member of the fleet stored for s into
// s: one round trip, shared by the requests to the origin that ask while
// it is under way. A store that fails leaves the process's own pause, if
// any.
func (p *pacer) fleetPause(ctx context.Context, s *schedule, now time.Time) {
	v, err, _ := p.pauses.Do(string(s.key), func() (any, error) {
		// Shared, so not cut short by the first asker's context; the
		// store bounds the call.
		return p.fleet.NextSlot(context.WithoutCancel(ctx), s.key, SlotRequest{Member: p.member, Now: now})
	})
	if err != nil {
		p.logger.Debug("robots: store cannot tell a pause; using the process's own", "origin", s.key, "error", err)
		return
	}
	if until := v.(time.Time); until.After(now) {
		s.pauseUntil(until, now)
	}
}

// sawMembers keeps the count of members the store gave, for origins
// without a count.
func (p *pacer) sawMembers(n int) {
	if n > 0 {
		p.members.Store(int64(n))
	}
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

// NextFree returns the earliest time a request for rawURL could be sent,
// as of now: its origin's next free politeness slot (the fleet's, from
// its store, when Options.Cache is a Fleet, so that the slots other
// members took count), not before the end of a Retry-After pause, and,
// while the origin's robots.txt is unreachable, not before the time it is
// fetched again (DisallowedError.RetryAt). It reserves nothing, counts
// no fleet member and never waits for a slot, so that a crawl frontier
// can hand a worker only URLs whose origin is free, and hold the others.
// A request sent at the time it returns still reserves its slot: another
// goroutine or member may take that one first, and the request then
// waits for the next.
//
// NextFree decides nothing (Check does) and fetches nothing: for an
// origin whose robots.txt is not held, the delay is Options.MinDelay,
// since the request will fetch it first. A URL that robots.txt does not
// govern gets an error matching ErrNotHTTP, and an unknown purpose in
// Options.Purposes one matching ErrUnknownPurpose. A store that cannot
// answer is replaced by the process's own schedule, as for a request.
func (t *Transport) NextFree(ctx context.Context, rawURL string) (time.Time, error) {
	t.init()
	if t.cfg.purposesErr != nil {
		return time.Time{}, t.cfg.purposesErr
	}
	tg, err := urlTarget(rawURL)
	if err != nil {
		return time.Time{}, err
	}
	now := t.cfg.now()
	o := t.origins.originFor(tg.id)
	delay := t.pacer.minDelay
	if st := o.current(); st != nil {
		var own [1]string
		agent, refused := st.agent(now, t.decider.fallbackAfter, t.decider.tokensFor(&tg, own[:0]))
		if refused && !tg.robotsTxt && st.rec.RetryAt.After(now) {
			return st.rec.RetryAt, nil
		}
		delay = t.pacer.delayFor(agent)
	}
	return t.pacer.nextFree(ctx, o, delay, now), nil
}

// nextFree returns o's next free slot for a request of delay at now,
// reserving nothing: the store's answer when there is a fleet and it
// answers, the process's own schedule's otherwise.
func (p *pacer) nextFree(ctx context.Context, o *origin, delay time.Duration, now time.Time) time.Time {
	s := p.scheduleOf(o)
	req := SlotRequest{Now: now, Interval: delay}
	if p.fleet != nil {
		s.mu.Lock()
		req.NotBefore, req.Held = s.paused(), s.lastSent
		s.mu.Unlock()
		at, err := p.fleet.NextSlot(ctx, s.key, req)
		if err == nil {
			return at
		}
		p.logger.Debug("robots: store cannot tell the next slot; using the process's own", "origin", s.key, "error", err)
		n := s.outageMembers(int(p.members.Load()))
		s.mu.Lock()
		req.NotBefore = latest(req.NotBefore, s.aloneAfter(n, delay))
		s.mu.Unlock()
	}
	// s, not the table's: the table may have let it go while o holds it.
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next(req)
}
