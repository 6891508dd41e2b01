package robots

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/crawlkit/robots/policy"
)

// pacer holds every request to its origin's politeness slot, in arrival
// order: in each origin's line only the head takes a slot, as it is
// handed on, through one Pace (the Fleet's while it answers, else the
// process's own at the delay times the members last seen). No slot is
// held asleep, so a pause from any member holds back every sleeper, and
// the next slot counts from the real send, told to every Pace as Held.
// It is safe for concurrent use.
type pacer struct {
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	local  Pace  // the process's own
	fleet  Fleet // nil without one
	member string
	logger *slog.Logger
	stats  *counters

	minDelay, maxCrawlDelay time.Duration
	maxPause                time.Duration
	detachedFor             time.Duration // a store call's bound once its request left

	lines  table[*line]
	pauses singleflight.Group // one read of a stored pause at a time
	// given holds the lines of the pauses this process received; retold
	// and lost when they were last all told again, for any cause and for
	// a loss the store showed (UnixNano; see retellPauses).
	given struct {
		sync.Mutex
		lines map[*line]struct{}
	}
	retold, lost atomic.Int64
	kept         atomic.Int32 // len(given.lines), read without the lock
	// Whether the store's last answer failed; epoch tokens offered; how
	// long (ns) its answers lately took to be in hand, which store slots
	// are spread by. The store's last member count for any origin is
	// stats.members.
	down   atomic.Bool
	epochs atomic.Uint64
	late   atomic.Int64
}

// maxTries bounds the answers in a row that neither reserve a slot nor
// name a later one (a store answering in the wrong unit fails the
// request rather than spin); minSpread is the least spread of a slot;
// maxMembers bounds the member count a store answers, so that the delay
// times the members, paced by while the store is down, is a wait rather
// than an overflow (a count near 2^63 / delay wrapped to no spacing).
const (
	maxTries   = 8
	minSpread  = 500 * time.Microsecond
	maxMembers = 4096
)

// init readies p to pace on local, and on fleet when it is not nil.
func (p *pacer) init(c *config, local Pace, fleet Fleet, now func() time.Time, sleep func(context.Context, time.Duration) error, stats *counters) {
	p.now, p.sleep, p.logger, p.stats = now, sleep, c.logger, stats
	p.minDelay, p.maxCrawlDelay, p.maxPause, p.detachedFor = c.minDelay, c.maxCrawlDelay, c.maxBackoff, c.fetchTimeout
	p.local, p.fleet = local, fleet
	p.member = rand.Text()
	p.lines.init(4*c.maxOrigins, now, func(key OriginKey) *line { return &line{key: key} })
}

// lineOf returns key's line, kept in at so that the table is searched
// once per origin held.
func (p *pacer) lineOf(key OriginKey, at *atomic.Pointer[line]) *line {
	if l := at.Load(); l != nil {
		return l
	}
	l := p.lines.get(key)
	if !at.CompareAndSwap(nil, l) {
		l = at.Load()
	}
	return l
}

// delayFor returns the least time between two requests to an origin
// whose robots.txt holds the crawler to agent: Options.MinDelay, raised
// by the groups' Crawl-delay up to Options.MaxCrawlDelay. Crawl-delay is
// not part of RFC 9309: it paces, never decides.
func (p *pacer) delayFor(agent policy.Agent) time.Duration {
	// A MaxCrawlDelay of 0 (the option negative) ignores Crawl-delay.
	if cd, ok := agent.CrawlDelay(); ok {
		return max(p.minDelay, min(cd, p.maxCrawlDelay))
	}
	return p.minDelay
}

// wait holds a request to l's origin, made at now, until its slot: delay
// after the last send, past any pause, after every earlier request. When
// its slot comes the head calls recheck (if any), which may renew a
// robots state the wait outlasted and returns the delay then in force,
// and only then takes the slot. A slot past the deadline less a tenth of
// the time left fails at once with a *SlotError, holding nothing; a
// waiter whose context ends leaves, and the ones behind move up. place,
// if not nil, is the waiter the request joined l as when it arrived;
// wait takes it over.
func (p *pacer) wait(ctx context.Context, l *line, place *waiter, delay time.Duration, now time.Time, recheck func(time.Time) (time.Duration, error)) (*ticket, error) {
	if delay <= 0 && !p.paused(ctx, l, now).After(now) {
		if place != nil {
			l.leave(place)
		}
		return nil, nil // nothing to space requests by: no slot, no lock
	}
	if place == nil {
		place = l.join()
	}
	tk, err := p.hold(ctx, l, place, delay, recheck, 0)
	p.stats.waitedFor(max(p.now().Sub(now), 0))
	return tk, err
}

// hold is wait for w, in l's line, asking a store slot spread at least
// atLeast.
func (p *pacer) hold(ctx context.Context, l *line, w *waiter, delay time.Duration, recheck func(time.Time) (time.Duration, error), atLeast time.Duration) (held *ticket, err error) {
	// The limit is as of the wait: what came before it (a price reserved
	// in a slow store, say) is no longer left.
	now := p.now()
	lim, left, most := limit(ctx, now)
	start, waited := now, false
	defer func() {
		if waited {
			p.stats.waited.Add(int64(max(p.now().Sub(start), 0)))
		}
		// Without a ticket (an error, or a panic of a recheck) w leaves,
		// or the line would wait behind it for good.
		if held == nil {
			l.leave(w)
		}
	}()
	for tries := 0; ; {
		ahead := l.ahead(w)
		at := p.estimate(ctx, l, delay, now, p.down.Load()).Add(time.Duration(ahead) * delay)
		if !lim.IsZero() && at.After(lim) {
			if left > 0 { // as of now, as the slot's distance is
				left = max(left-now.Sub(start), time.Nanosecond)
			}
			return nil, &SlotError{Origin: string(l.key), At: at, Left: left, MaxWait: most, wait: at.Sub(now)}
		}
		// Slots are to the microsecond: one rounding up past now is free.
		if ahead > 0 || at.After(slotTime(now)) {
			waited = true
			if err := p.sleepIn(ctx, l, w, ahead == 0, at.Sub(now)); err != nil {
				return nil, err
			}
			now = p.now()
			continue
		}
		if recheck != nil {
			d, err := recheck(now)
			if err != nil {
				return nil, err
			}
			if now = p.now(); d != delay {
				delay = d
				continue
			}
		}
		tk, next, err := p.take(ctx, l, delay, now, atLeast)
		if err != nil {
			return nil, err
		}
		if tk.l != nil {
			tk.w = w
			return &tk, nil
		}
		if now = p.now(); next.After(now) {
			tries = 0
			continue
		}
		if tries++; tries >= maxTries {
			return nil, fmt.Errorf("robots: no usable politeness slot for %s after %d tries: the store names no slot it would reserve", l.key, maxTries)
		}
	}
}

// ticket is a request's slot, from wait to handOn; unpaced, none.
type ticket struct {
	l      *line
	w      *waiter
	at     time.Time
	delay  time.Duration
	spread time.Duration // a store slot's
	store  bool
}

// estimate returns l's next slot as the process's own Pace sees it: past
// the last send, store slot and pause, not before the store last said;
// while the store is down, as alone makes it.
func (p *pacer) estimate(ctx context.Context, l *line, delay time.Duration, now time.Time, down bool) time.Time {
	l.mu.Lock()
	l.delay = delay
	req := SlotRequest{Now: now, Interval: delay, NotBefore: latest(l.pausedAt(), l.next), Held: l.sentAt()}
	if !l.last.IsZero() {
		req.NotBefore = latest(req.NotBefore, l.last.Add(delay))
	}
	if p.fleet != nil && down {
		p.alone(l, &req)
	}
	l.mu.Unlock()
	at, _ := p.local.NextSlot(ctx, l.key, req)
	return at
}

// alone makes req that of a member pacing without the store: a slot for
// itself and each member it last saw, which it cannot see now, so that
// many delays after its last store slot. l.mu is held.
func (p *pacer) alone(l *line, req *SlotRequest) {
	n := time.Duration(p.members(l))
	if !l.last.IsZero() {
		req.NotBefore = latest(req.NotBefore, l.last.Add(n*req.Interval))
	}
	req.Interval *= n
	req.Member, req.Spread, req.Epoch = "", 0, ""
}

// members returns how many members the process last saw pacing l's
// origin (or any origin), at least itself. l.mu is held.
func (p *pacer) members(l *line) int {
	n := l.members
	if n <= 0 {
		n = int(p.stats.members.Load())
	}
	return max(n, 1)
}

// take takes the head's slot at now, if free, through the Fleet (spread
// at least atLeast) or, without one or while it fails, the process's
// own Pace. With no ticket, next is when the Pace said it is free.
func (p *pacer) take(ctx context.Context, l *line, delay time.Duration, now time.Time, atLeast time.Duration) (tk ticket, next time.Time, err error) {
	if p.fleet != nil {
		if waited, err := l.givenBack(ctx); err != nil {
			return ticket{}, time.Time{}, err
		} else if waited {
			now = p.now()
		}
	}
	now = slotTime(now)
	req := SlotRequest{Now: now, NotBefore: l.pausedAt(), Interval: delay, Limit: now, Held: l.sentAt()}
	if p.fleet != nil {
		req.Member, req.Epoch, req.Spread = p.member, p.epochToken(), p.spread(delay, atLeast)
		slot, err := p.fleet.ReserveSlot(ctx, l.key, req)
		if err == nil {
			if p.down.Swap(false) && p.claim(&p.lost) {
				// Back: a pause received while it was down, or lost
				// with it, is told to it now.
				go p.retellPauses()
			}
			gone := slot.At.After(req.Limit) || ctx.Err() != nil
			p.heard(l, slot, gone, req.Spread)
			if p.kept.Load() > 0 && p.claim(&p.retold) {
				// A store can lose a pause without a sign (a failover to
				// a replica behind keeps its epoch): while this process
				// holds pauses, each reservation it makes tells them
				// again, once in retellAfter.
				go p.retellPauses()
			}
			switch {
			case !slot.Reserved:
				return ticket{}, slot.At, nil
			case gone:
				p.cancel(ctx, l, slot.At.Add(req.Spread), delay+req.Spread)
				return ticket{}, time.Time{}, ctx.Err()
			}
			late := max(p.now().Sub(slot.At), 0)
			old := time.Duration(p.late.Load())
			p.late.Store(int64(max(late, old-old/8)))
			return ticket{l: l, at: slot.At, delay: delay, spread: req.Spread, store: true}, slot.At, nil
		}
		if err := CallerGaveUp(ctx); err != nil {
			return ticket{}, time.Time{}, err
		}
		p.down.Store(true)
		p.logger.Debug("robots: store cannot reserve a slot; pacing locally", "origin", l.key, "error", err)
		req.Now = slotTime(p.now())
		req.Limit = req.Now
		l.mu.Lock()
		p.alone(l, &req)
		l.mu.Unlock()
	}
	slot, err := p.local.ReserveSlot(ctx, l.key, req)
	if err != nil || !slot.Reserved {
		return ticket{}, slot.At, err
	}
	return ticket{l: l}, slot.At, nil
}

// heard keeps the store's answer: its member count and epoch (a new one
// means the store lost the pace and has it again from Held), when the
// origin is free if not now, and the end of a slot kept (not gone).
func (p *pacer) heard(l *line, slot Slot, gone bool, spread time.Duration) {
	members := min(slot.Members, maxMembers)
	if members > 0 {
		p.stats.members.Store(int64(members))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if members > 0 {
		l.members = members
	}
	if l.epoch != "" && slot.Epoch != l.epoch {
		p.logger.Info("robots: store lost the origin's pace; its last slot is this process's last send", "origin", l.key)
		// What lost one origin's pace (a flush, a restart, a replica
		// behind) lost the others' pauses too.
		if p.claim(&p.lost) {
			go p.retellPauses()
		}
	}
	l.epoch = slot.Epoch
	if !slot.Reserved {
		l.next = latest(l.next, slot.At)
	} else if !gone {
		l.last = latest(l.last, slot.At.Add(spread))
	}
}

// spread returns a store slot's spread: twice the lateness lately
// measured, within minSpread and half the delay, or atLeast.
func (p *pacer) spread(delay, atLeast time.Duration) time.Duration {
	return max(min(2*time.Duration(p.late.Load()), delay/2), minSpread, atLeast)
}

// handOn lets tk's request go, the last thing before the base: the send,
// the next slot's base, is recorded before the line moves up, so that the
// waiter woken next counts from it (woken first, it could count from the
// slot alone and take one at once, ahead of a send that came late). A
// store slot whose spread passed before the send (the answer came late,
// or the process was preempted after it) is given back and asked again
// with a spread the lateness fits, past half the delay if need be, so
// that the delay holds from the send and a slow store still gets the
// request sent.
func (p *pacer) handOn(ctx context.Context, tk *ticket) error {
	for tk != nil && tk.store {
		late := p.now().Sub(tk.at)
		if late <= tk.spread {
			break
		}
		p.cancel(ctx, tk.l, tk.at.Add(tk.spread), tk.delay+tk.spread)
		var err error
		if tk, err = p.hold(ctx, tk.l, tk.w, tk.delay, nil, 2*late); err != nil {
			return err
		}
	}
	if tk == nil {
		return nil
	}
	tk.l.send(p.now())
	tk.l.leave(tk.w)
	// Once more, so that a waiter woken as the line moved, asleep toward
	// a slot counted from the first, wakes to what the move took too.
	tk.l.send(p.now())
	return nil
}

// cancel gives the store's slot at back, wasted only if it cannot be.
func (p *pacer) cancel(ctx context.Context, l *line, at time.Time, delay time.Duration) {
	// The process's own view forgets the slot as the store does, so that
	// the next wait does not count it: a request given back its slot for
	// an answer in hand too late would otherwise wait a delay, or fail
	// with a *SlotError, for a slot nobody uses.
	l.mu.Lock()
	if l.last.Equal(at) {
		l.last = at.Add(-delay)
	}
	l.mu.Unlock()
	back := p.tell(ctx, l, "robots: store cannot give a slot back", func(ctx context.Context) error {
		return p.fleet.CancelSlot(ctx, l.key, at, delay)
	})
	l.givingBack.Store(&back)
	whileWaiting(ctx, back)
}

// tell starts a store write that is to land even when the request
// making it gave up (a slot given back, a pause), as land does, logging
// failed with the write's error and l's origin.
func (p *pacer) tell(ctx context.Context, l *line, failed string, write func(context.Context) error) chan struct{} {
	return land(ctx, p.detachedFor, p.logger, failed, slog.String("origin", string(l.key)), write)
}

// sleepIn sleeps the head w of l for d, another waiter until woken (the
// line moved, a pause); a wake ends the head's sleep too, by cancelling
// it, so that no goroutine watches a sleeping head.
func (p *pacer) sleepIn(ctx context.Context, l *line, w *waiter, head bool, d time.Duration) error {
	p.stats.waiting.Add(1)
	defer p.stats.waiting.Add(-1)
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
	if !l.sleeping(w, stop) {
		return nil // woken already
	}
	defer l.sleeping(w, nil)
	if err := p.sleep(sctx, d); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// epochToken returns an epoch for a store without one, new at each call
// so that a store restarted empty never takes its old one.
func (p *pacer) epochToken() string {
	return p.member + "." + strconv.FormatUint(p.epochs.Add(1), 36)
}

// pausedFor is paused for the origin key names, whose line the caller
// does not hold (a robots.txt redirect's).
func (p *pacer) pausedFor(ctx context.Context, key OriginKey, now time.Time) time.Time {
	return p.paused(ctx, p.lines.get(key), now)
}

// pauseEnd returns the end of the pause of the origin key names as of
// now, the store asked afresh (a round trip): the later of this process's
// and the one any member stored, which may have grown since this process
// last read it.
func (p *pacer) pauseEnd(ctx context.Context, key OriginKey, now time.Time) time.Time {
	until := p.lines.get(key).pausedAt()
	if p.fleet != nil {
		if stored, err := p.fleet.NextSlot(ctx, key, SlotRequest{Member: p.member, Now: now}); err == nil && stored.After(slotTime(now)) {
			until = latest(until, stored)
		}
	}
	return until
}

// paused returns the end of l's pause: the process's own, and the one any
// member stored, read once for the unpaced requests that ask meanwhile
// (a crawl at MinDelay -1 sends thousands at once).
func (p *pacer) paused(ctx context.Context, l *line, now time.Time) time.Time {
	if p.fleet == nil || l.pausedAt().After(now) {
		return l.pausedAt()
	}
	ch := p.pauses.DoChan(string(l.key), func() (any, error) {
		// Shared: each asker stops waiting when its context ends.
		rctx, cancel := detachedFor(ctx, p.detachedFor)
		defer cancel()
		return p.fleet.NextSlot(rctx, l.key, SlotRequest{Member: p.member, Now: now})
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			p.logger.Debug("robots: store cannot tell a pause; using the process's own", "origin", l.key, "error", res.Err)
		} else if until := res.Val.(time.Time); until.After(slotTime(now)) {
			// A slot is to the microsecond: "free now" may be rounded
			// up past now, which is no pause.
			l.pauseUntil(until)
		}
	case <-ctx.Done():
	}
	return l.pausedAt()
}

// pause stops requests to l's origin as long as a 429 or 503 response's
// Retry-After asks (RFC 9110 section 10.2.3), at most Options.MaxBackoff,
// in l (waking its waiters) and in the store, which every member's head
// asks before it sends.
func (p *pacer) pause(ctx context.Context, l *line, resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return // the common answer, without a clock read
	}
	now := p.now()
	if until, ok := RetryAfter(resp, now); ok && p.maxPause > 0 {
		if most := now.Add(p.maxPause); until.After(most) {
			until = most
		}
		p.pauseUntil(ctx, l, until, resp.StatusCode)
	}
}

// pauseUntil stops requests to l's origin until until, in l and in the
// store, for a response with status.
func (p *pacer) pauseUntil(ctx context.Context, l *line, until time.Time, status int) {
	p.stats.paused(status)
	l.pauseUntil(until)
	if p.fleet != nil {
		p.given.Lock()
		if p.given.lines == nil {
			p.given.lines = make(map[*line]struct{})
		}
		p.forgetPausesOver(p.now())
		p.given.lines[l] = struct{}{}
		p.kept.Store(int32(len(p.given.lines)))
		p.given.Unlock()
		whileWaiting(ctx, p.tell(ctx, l, "robots: store cannot keep a pause; kept locally", func(ctx context.Context) error {
			return p.fleet.Pause(ctx, l.key, until)
		}))
	}
	p.logger.Info("robots: origin paused", "origin", l.key, "status", status, "until", until)
}

// retellPauses tells the store again every pause this process received
// that is still on, each a write of its own (see tell), and forgets
// those over, so that a store that lost them, or was down when they
// came, holds every member back: the members that never asked during a
// pause would otherwise take slots in it. Its callers claim it first.
func (p *pacer) retellPauses() {
	now := p.now()
	p.given.Lock()
	defer p.given.Unlock()
	p.forgetPausesOver(now)
	for l := range p.given.lines {
		until := l.pausedAt()
		p.tell(context.Background(), l, "robots: store cannot keep a pause again; kept locally", func(ctx context.Context) error {
			return p.fleet.Pause(ctx, l.key, until)
		})
	}
}

// claim reports whether the pauses are to be told again now for the cause
// whose last time last holds (p.lost for a loss the store showed,
// p.retold for none), marking it so: not within retellAfter of that time.
// One flush is seen on every origin the process paces, as each is next
// reserved, and while pauses are held every reservation asks; but a loss
// shown is told at once, however lately the pauses were told for no
// sign. Any telling counts for p.retold.
func (p *pacer) claim(last *atomic.Int64) bool {
	now := p.now().UnixNano()
	if t := last.Load(); now-t < int64(retellAfter) || !last.CompareAndSwap(t, now) {
		return false
	}
	p.retold.Store(now)
	return true
}

// forgetPausesOver forgets the lines whose pause is over at now, so that
// p.given holds only the pauses on. p.given is locked.
func (p *pacer) forgetPausesOver(now time.Time) {
	for l := range p.given.lines {
		if !l.pausedAt().After(now) {
			delete(p.given.lines, l)
		}
	}
	p.kept.Store(int32(len(p.given.lines)))
}

// retellAfter is how long after pauses were told again they may be
// told again.
const retellAfter = time.Second

// nextFree returns l's next free slot, reserving nothing: the later of
// the estimate and the store's answer, plus a slot for each waiter
// ahead, each as far apart as the line's slots come: a delay, with a
// store slot's spread in a fleet, and the members' turns between while
// the store is down. A store call cut short by ctx returns its error.
func (p *pacer) nextFree(ctx context.Context, l *line, delay time.Duration, now time.Time) (time.Time, error) {
	down := p.fleet != nil && p.down.Load()
	at := p.estimate(ctx, l, delay, now, down)
	if p.fleet != nil && !down {
		req := SlotRequest{Now: now, Interval: delay, NotBefore: l.pausedAt(), Held: l.sentAt()}
		stored, err := p.fleet.NextSlot(ctx, l.key, req)
		if err == nil {
			at = latest(at, stored)
		} else if gone := CallerGaveUp(ctx); gone != nil {
			return time.Time{}, gone
		} else {
			p.logger.Debug("robots: store cannot tell the next slot; using the process's own", "origin", l.key, "error", err)
			at, down = latest(at, p.estimate(ctx, l, delay, now, true)), true
		}
	}
	step := max(delay, 0)
	switch {
	case step == 0 || p.fleet == nil:
	case down:
		l.mu.Lock()
		step *= time.Duration(p.members(l))
		l.mu.Unlock()
	default:
		step += p.spread(delay, 0)
	}
	return at.Add(time.Duration(l.n.Load()) * step), nil
}

// pastLimit returns the *SlotError of a request of ctx, as of now, that
// can go no earlier than at (a pause its first robots.txt fetch waits
// out) when at lies past the request's limit; nil when it does not.
func (p *pacer) pastLimit(ctx context.Context, l *line, at, now time.Time) error {
	if lim, left, most := limit(ctx, now); !lim.IsZero() && at.After(lim) {
		return &SlotError{Origin: string(l.key), At: at, Left: left, MaxWait: most, wait: at.Sub(now)}
	}
	return nil
}

// limit returns the latest slot a request of ctx can use as of now (all
// but a tenth of the time left, the request's own margin) and the time
// left; zero for no deadline.
func limit(ctx context.Context, now time.Time) (lim time.Time, left, most time.Duration) {
	if deadline, ok := ctx.Deadline(); ok {
		left = time.Until(deadline)
		lim = now.Add(left - left/10)
	}
	if d, ok := ctx.Value(maxWaitKey{}).(time.Duration); ok {
		if w := now.Add(d); lim.IsZero() || w.Before(lim) {
			lim, most = w, d
		}
	}
	return lim, left, most
}

// maxWaitKey is the context key of WithMaxWait's bound.
type maxWaitKey struct{}

// WithMaxWait returns a copy of ctx with which a request waits at most d
// for its politeness slot: a slot further away fails the request at once
// with a *SlotError naming it, holding no slot, as a deadline that comes
// first does. The request itself is not bounded. A crawl frontier that
// hands out a URL when NextFree says its origin is free sends it so: when
// another process took that slot a moment before, its worker gets the URL
// back at once rather than sleeping a delay inside RoundTrip. A negative
// d is 0. The bound is the first send's only: a redirect hop http.Client
// makes (its Request.Response set), and the request sent again to pay a
// price or to answer a challenge, wait for their slots as without it,
// since what came before them was sent, and failing them would have the
// caller send it again, and again.
func WithMaxWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, maxWaitKey{}, max(d, 0))
}

// unbounded returns ctx without WithMaxWait's bound, for a request that
// follows one sent (see WithMaxWait).
func unbounded(ctx context.Context) context.Context {
	if _, ok := ctx.Value(maxWaitKey{}).(time.Duration); !ok {
		return ctx
	}
	return context.WithValue(ctx, maxWaitKey{}, nil)
}

// line is one origin's waiters in arrival order and what the process
// knows of its pace. It is safe for concurrent use.
type line struct {
	key OriginKey
	// Lock-free: len(waiters), and UnixNano times (0: none).
	n            atomic.Int32
	paused, sent atomic.Int64

	// givingBack is closed once the slot last given back to the store
	// is back (nil: none): the next reservation waits for it, so that
	// the slot is still the origin's last when the store gets it.
	givingBack atomic.Pointer[chan struct{}]

	mu      sync.Mutex // protects the fields below
	waiters []*waiter
	// When the store last said the origin is free; the end of this
	// process's last store slot; the store's last member count and epoch
	// (0, "": none); the delay last paced by.
	next, last time.Time
	members    int
	epoch      string
	delay      time.Duration
}

// givenBack waits until the slot last given back to the store is back,
// or ctx ends, and reports whether it waited.
func (l *line) givenBack(ctx context.Context) (bool, error) {
	p := l.givingBack.Load()
	if p == nil {
		return false, nil
	}
	back := *p
	select {
	case <-back:
		return false, nil
	default:
	}
	select {
	case <-back:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// waiter is one request in a line, woken when the line moves: told on
// wake, and, while it sleeps as the head, by stop, which ends its sleep
// (guarded by the line's mu).
type waiter struct {
	wake chan struct{}
	stop context.CancelFunc
}

// join puts a new waiter at the end of the line.
func (l *line) join() *waiter {
	w := &waiter{wake: make(chan struct{}, 1)}
	l.mu.Lock()
	l.waiters = append(l.waiters, w)
	l.n.Store(int32(len(l.waiters)))
	l.mu.Unlock()
	return w
}

// leave takes w out of the line, waking the ones behind it.
func (l *line) leave(w *waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.waiters, w); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		l.n.Store(int32(len(l.waiters)))
		l.wake(i)
	}
}

// ahead returns how many waiters are ahead of w.
func (l *line) ahead(w *waiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(slices.Index(l.waiters, w), 0)
}

// wake wakes the waiters from the i-th on. l.mu is held.
func (l *line) wake(i int) {
	for _, w := range l.waiters[i:] {
		if w.stop != nil {
			w.stop()
			continue
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// sleeping sets what ends w's sleep as the head (nil once awake), and
// reports false, setting nothing, when w was woken already.
func (l *line) sleeping(w *waiter, stop context.CancelFunc) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stop != nil {
		select {
		case <-w.wake:
			return false
		default:
		}
	}
	w.stop = stop
	return true
}

// pauseUntil lengthens the pause to until, waking every waiter.
func (l *line) pauseUntil(until time.Time) {
	for cur := l.paused.Load(); until.UnixNano() > cur; cur = l.paused.Load() {
		if l.paused.CompareAndSwap(cur, until.UnixNano()) {
			l.mu.Lock()
			l.wake(0)
			l.mu.Unlock()
			return
		}
	}
}

// pausedAt returns the end of the pause, the zero time for none.
func (l *line) pausedAt() time.Time { return unixTime(l.paused.Load()) }

// sentAt returns the time of the last send, the zero time before one.
func (l *line) sentAt() time.Time { return unixTime(l.sent.Load()) }

// send records a send at at, unless a later one is recorded.
func (l *line) send(at time.Time) {
	n := slotTime(at).UnixNano()
	for cur := l.sent.Load(); n > cur && !l.sent.CompareAndSwap(cur, n); cur = l.sent.Load() {
	}
}

// busy reports whether l holds anything back at now.
func (l *line) busy(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	alone := time.Duration(max(l.members, 1)) * l.delay
	return len(l.waiters) > 0 || latest(l.pausedAt(), l.next, l.last.Add(alone), l.sentAt().Add(l.delay)).After(now)
}

func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
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

// slotTime rounds a time up to the microsecond, as a store keeps slots:
// a slot never lies before the time it is counted from.
func slotTime(t time.Time) time.Time {
	if ns := t.Nanosecond() % 1000; ns != 0 {
		t = t.Add(time.Duration(1000 - ns))
	}
	return t.Round(0)
}
