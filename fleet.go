package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// Fleet is what a store shared by the processes of a crawler fleet
// provides: records written by compare-and-swap, so that concurrent
// writers merge instead of overwriting each other; a lease on fetching
// each origin's robots.txt, so that the fleet fetches it once; the
// crawls' budgets for paid pages; and each origin's pace (slots, Retry-After pauses, the members pacing it and
// the epoch of the store's state), so that the fleet sends no faster
// than one crawler would. Give one as Options.Fleet, the only way a
// Transport gets one; Options.Cache is for plain record stores. Every
// method takes a context and receives its origin's key ready-made, so a
// store keeps each origin's entries together without reading the key.
// Package fleettest checks an implementation against this contract.
//
// The Transport bounds by Options.FetchTimeout the calls that run
// detached from a request: a write that is to land after the request
// that made it left (a slot given back, a pause), a read of a pause that
// several requests share, and every call of a robots.txt renewal, which
// several requests share, on a context without a deadline. It bounds them
// through their contexts alone, so every method must return once its
// context ends: one that does not holds its request past its deadline,
// and a CancelSlot that never returns holds its origin's line. A panic is
// the call's error, logged.
//
// An error from any method means the store could not answer that call:
// the Transport then uses its own state for the request (its own fetch,
// its own pace), never allowing everything. An error of a call whose
// context had ended is the caller's and counts as no failure, unless it
// matches ErrStoreFailed (the store counted it while the caller waited);
// one matching ErrStoreSkipped is a call the store did not try.
type Fleet interface {
	// Load returns the record stored under key, and whether there is one.
	Load(ctx context.Context, key RecordKey) (value []byte, found bool, err error)
	// Swap stores new under key only if the stored value equals old (old
	// nil: only if there is none). It reports whether it stored.
	Swap(ctx context.Context, key RecordKey, old, new []byte) (bool, error)

	// Lease takes the lease on fetching origin's robots.txt for ttl if no
	// one else holds it, and reports whether token, which names the
	// holder (random per transport), now holds it. The holder taking it
	// again holds it (true) for ttl from then: a transport whose Unlease
	// was lost fetches again at once, never waiting out its own lease,
	// and its new fetch has the whole ttl.
	Lease(ctx context.Context, origin OriginKey, token string, ttl time.Duration) (bool, error)
	// Unlease gives origin's lease up if token still holds it.
	Unlease(ctx context.Context, origin OriginKey, token string) error

	Pace
	// Ledger keeps the crawls' budgets (see Payment): while it cannot
	// answer, no paid request is sent.
	Ledger
}

// Pace is an origin's pace, the one seam every paced request goes
// through: a Transport without a Fleet paces on one in memory (on
// golang.org/x/time/rate), and a fleet member on its Fleet's,
// falling back on the one in memory while the store is unavailable. The
// Transport waits the same way on both: only the head of an origin's
// line asks, for a slot free now (Limit is Now), and told when the origin
// is free it sleeps and asks again, so that nothing is held while a
// request sleeps; a slot is given back only when it was reserved for a
// request that can no longer use it (its context ended, or the answer
// came too late).
//
// Times are the callers' (SlotRequest.Now): a Pace reads no clock to
// decide a slot, so that members on different machines, and tests on a
// fake clock, agree on the arithmetic. A store writes these four methods;
// redisstore's and docs/fleet.md say how.
type Pace interface {
	// ReserveSlot reserves the earliest slot of origin that is no
	// earlier than req.NotBefore (or req.Now), than the later of
	// req.Held and the last slot reserved by any member plus
	// req.Interval, and than any pause, and counts req.Member as pacing
	// origin for MemberWindowFor(req.Interval) after it. A store that does not know
	// req.Held (it lost its state) first takes it as its last slot. If
	// the slot would be after req.Limit, nothing is reserved and the Slot
	// says when it would have been. Slot.Epoch names the store's state:
	// a store that starts empty takes req.Epoch as its epoch and keeps
	// it while it keeps its slots.
	ReserveSlot(ctx context.Context, origin OriginKey, req SlotRequest) (Slot, error)
	// CancelSlot gives back the slot at (reserved with interval) if it is
	// still origin's last one.
	CancelSlot(ctx context.Context, origin OriginKey, at time.Time, interval time.Duration) error
	// Pause holds every later slot of origin until at least until
	// (Retry-After).
	Pause(ctx context.Context, origin OriginKey, until time.Time) error
	// NextSlot returns the slot ReserveSlot would reserve for req, pause
	// included, without reserving it or counting a member: when origin
	// is next free. With a zero req.Interval it is the later of req.Now,
	// req.NotBefore and the end of any pause.
	NextSlot(ctx context.Context, origin OriginKey, req SlotRequest) (time.Time, error)
}

// Ledger keeps what crawls spend on the pages sites charge for (see
// Payment): a Transport without a Fleet keeps one in memory, and a
// fleet's members keep theirs in the Fleet, so that together they never
// spend past a budget nor pay twice for a URL in a crawl. A crawl names
// its budget and its currency ("crawl USD"); amounts are in millionths of
// that currency; url is the page as its server receives it (scheme, Host
// and request target, no fragment), one name however links spell it.
// Each method is one atomic step of the store.
type Ledger interface {
	// Reserve sets amount aside from crawl's budget of limit for url,
	// unless url is paid or being paid in crawl (Reservation.Paid), or
	// what crawl spent and holds reserved plus amount would pass limit.
	Reserve(ctx context.Context, crawl, url string, amount, limit int64) (Reservation, error)
	// Settle ends url's reservation of reserved (0 for none) with
	// charged spent: url stays paid in crawl.
	Settle(ctx context.Context, crawl, url string, reserved, charged int64) error
	// Release gives url's reservation of reserved back, unspent: url may
	// be paid later.
	Release(ctx context.Context, crawl, url string, reserved int64) error
}

// Reservation is a Ledger's answer to Reserve.
type Reservation struct {
	// Reserved reports whether the amount was set aside.
	Reserved bool
	// Paid reports that the URL was paid, or is being paid, in the
	// crawl: nothing was set aside.
	Paid bool
	// Left is what the budget has left after the call: its limit less
	// what was spent and what is reserved, never below 0.
	Left int64
}

// OriginKey names one origin in a Fleet: its scheme, host and port
// as the Transport spells them ("https://site.example:8443", the host
// lower-cased and in ASCII, a default port left out), or, for requests
// whose Host header names another site than the address they are sent to,
// that site and the address ("https://site.example|10.0.0.1:8443"). A
// store uses it as it is: every entry of one origin is named by it.
type OriginKey string

// RecordKey names one origin's robots record in a Fleet: the origin,
// and for a robots.txt that varies by User-Agent, the variant of the
// transport's user agent ("" otherwise).
type RecordKey struct {
	Origin  OriginKey
	Variant string
}

// SlotRequest is what a paced request asks of a Pace.
type SlotRequest struct {
	// Member names the process reserving (random per transport), so that
	// the store can count the members pacing an origin.
	Member string
	// Now is the reserver's clock.
	Now time.Time
	// NotBefore is the earliest the slot may be: the end of a pause the
	// member knows of. If zero or before Now, Now is used.
	NotBefore time.Time
	// Interval is the least time between two slots of the origin.
	Interval time.Duration
	// Limit is the latest slot the request can use. If zero, there is
	// none.
	Limit time.Time
	// Spread is how long after its slot the request may still be handed
	// on (the time the member's answer can take to act on): a reserved
	// slot lasts until At plus Spread, and the next is Interval after
	// that, so that the delay holds from the latest moment the request
	// may go. Zero: the slot is the send.
	Spread time.Duration
	// Held is the latest slot the member sent a request in, which the
	// store may have lost: the store's last slot is raised to it, so a
	// store restarted empty grants no slot closer than Interval after
	// it. Zero when none.
	Held time.Time
	// Epoch is the epoch a store with none (one that starts empty) is to
	// take: a random token per reservation or per member.
	Epoch string
}

// Slot is a Pace's answer to a SlotRequest.
type Slot struct {
	// At is the send time reserved, or the one that would have been when
	// Reserved is false.
	At time.Time
	// Reserved reports whether At was reserved: false when it lay past
	// the request's Limit.
	Reserved bool
	// Members is how many members, the caller included, reserved slots
	// of the origin lately: while the store is unavailable, each member
	// paces the origin at this many times the delay, so that the fleet
	// keeps the origin's pace. Zero when the store does not count; a
	// count past 4,096 is taken as 4,096.
	Members int
	// Epoch names the store's state of the origin's pace: it changes
	// when the store lost it (restarted empty, flushed, failed over to a
	// replica behind), and a member then tells it again the pauses it
	// received, as after a failed call; its last send it tells with every
	// reservation (Held). Empty when the store keeps no epoch.
	Epoch string
}

// ErrStoreFailed is matched by the error of a Fleet call that the store
// counted as its own, a failure or (matching ErrStoreSkipped too) a call
// it skipped, which it may only while its caller waits (CallerGaveUp is
// nil): the Transport counts such a call in Stats.StoreErrors and
// Stats.StoreFallbacks even when the caller's context ended after the
// store looked, so that its counts and the store's agree. StoreFailed
// marks one.
var ErrStoreFailed = errors.New("robots: fleet store failed")

// StoreFailed returns err marked as a call the store counted as its own:
// it matches ErrStoreFailed and err, and reads as err.
func StoreFailed(err error) error { return storeFailure{err} }

type storeFailure struct{ error }

func (e storeFailure) Unwrap() error      { return e.error }
func (storeFailure) Is(target error) bool { return target == ErrStoreFailed }

// ErrStoreSkipped is matched by the error of a Fleet call that the
// store did not try, as while it leaves a failed server alone for a
// cooldown: the Transport falls back on its own state as for any error,
// and counts the call in Stats.StoreFallbacks but not in
// Stats.StoreErrors, which counts the calls that failed.
var ErrStoreSkipped = errors.New("robots: fleet store skipped the call")

// detachedFor returns ctx without its cancellation, bounded by d, for a
// store call that is to finish after its caller left (a write that must
// land, a read that other callers share), so that a store that never
// answers cannot hold it for good.
func detachedFor(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return boundFor(context.WithoutCancel(ctx), d)
}

// land starts a store write that is to land even when the request making
// it gave up: detached from ctx and bounded by bound (Options.FetchTimeout).
// The channel returned is closed once the write is done; the request
// waits for it only while ctx lasts (whileWaiting), so that a store that
// does not answer never holds a request past its deadline. failed is
// logged with about and the write's error.
func land(ctx context.Context, bound time.Duration, logger *slog.Logger, failed string, about slog.Attr, write func(context.Context) error) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		wctx, cancel := detachedFor(ctx, bound)
		defer cancel()
		if err := write(wctx); err != nil {
			logger.Warn(failed, about, "error", err)
		}
	}()
	return done
}

// whileWaiting waits until done is closed or ctx ends.
func whileWaiting(ctx context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// boundFor returns ctx, which has no deadline, bounded by d, the
// transport's own bound on a store call that no caller waits for:
// CallerGaveUp reads its passing as the store's failure to answer.
func boundFor(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	return context.WithValue(ctx, ownBound{}, true), cancel
}

// ownBound is the context key boundFor marks its contexts with.
type ownBound struct{}

// countedFleet is a Fleet that counts the errors of the one it
// wraps, as Stats.StoreErrors and Stats.StoreFallbacks, so that every
// call the transport makes, from the robots cache or the pacer, is
// counted in one place. An error of a call whose context had ended is
// the caller's, not the store's, and is not counted. A panic of the
// wrapped Fleet is its call's error, logged with its stack: the process
// goes on on its own state, as for any store that cannot answer.
type countedFleet struct {
	Fleet
	stats  *counters
	logger *slog.Logger
}

// counted returns f counting its errors into stats, or nil for no fleet.
func counted(f Fleet, stats *counters, logger *slog.Logger) Fleet {
	if f == nil {
		return nil
	}
	return countedFleet{Fleet: f, stats: stats, logger: logger}
}

// done ends a call of op: it turns a panic into *err, and counts *err.
// It is deferred, so that recover sees the panic.
func (c countedFleet) done(ctx context.Context, op string, err *error) {
	if p := recover(); p != nil {
		c.logger.Error("robots: panic in Fleet."+op, "panic", p, "stack", string(debug.Stack()))
		if e, ok := p.(error); ok {
			*err = fmt.Errorf("robots: panic in Fleet.%s: %w", op, e)
		} else {
			*err = fmt.Errorf("robots: panic in Fleet.%s: %v", op, p)
		}
	}
	// What the store counted, it counted while the caller waited.
	if *err != nil && (CallerGaveUp(ctx) == nil || errors.Is(*err, ErrStoreFailed)) {
		c.stats.storeFailed(*err)
	}
}

// MemberWindowFor returns how long after its last slot a member of a fleet
// still counts as pacing an origin of interval: a minute, or 32
// intervals when longer, so that a member whose own slots are members
// times the interval apart stays counted between them for up to 32
// members. A Fleet counts members over this window.
func MemberWindowFor(interval time.Duration) time.Duration {
	return max(time.Minute, 32*interval)
}

// CallerGaveUp returns the error of ctx once its caller gave up on it,
// by cancelling it or by its deadline passing, and nil while the caller
// still waits. A Fleet's call that fails then says nothing about the
// store: a store counts it as no failure of its own and starts no
// cooldown for it, and the transport counts it in neither
// Stats.StoreErrors nor Stats.StoreFallbacks. The deadline is read as
// well as Err, since a connection's read deadline, set from it, can fire
// before the context's own timer does: the error is then
// context.DeadlineExceeded. A deadline the transport set itself on a
// call that no caller waits for (a write that is to land after its
// request left, a read its requests share) is no caller's: its passing
// means the store did not answer in time, and CallerGaveUp returns nil.
func CallerGaveUp(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		if d, ok := ctx.Deadline(); !ok || time.Now().Before(d) {
			return nil
		}
		err = context.DeadlineExceeded
	}
	if err == context.DeadlineExceeded && ctx.Value(ownBound{}) != nil {
		return nil
	}
	return err
}

func (c countedFleet) Load(ctx context.Context, key RecordKey) (v []byte, found bool, err error) {
	defer c.done(ctx, "Load", &err)
	return c.Fleet.Load(ctx, key)
}

func (c countedFleet) Swap(ctx context.Context, key RecordKey, old, new []byte) (ok bool, err error) {
	defer c.done(ctx, "Swap", &err)
	return c.Fleet.Swap(ctx, key, old, new)
}

func (c countedFleet) Lease(ctx context.Context, origin OriginKey, token string, ttl time.Duration) (held bool, err error) {
	defer c.done(ctx, "Lease", &err)
	return c.Fleet.Lease(ctx, origin, token, ttl)
}

func (c countedFleet) Unlease(ctx context.Context, origin OriginKey, token string) (err error) {
	defer c.done(ctx, "Unlease", &err)
	return c.Fleet.Unlease(ctx, origin, token)
}

func (c countedFleet) ReserveSlot(ctx context.Context, origin OriginKey, req SlotRequest) (slot Slot, err error) {
	defer c.done(ctx, "ReserveSlot", &err)
	return c.Fleet.ReserveSlot(ctx, origin, req)
}

func (c countedFleet) CancelSlot(ctx context.Context, origin OriginKey, at time.Time, interval time.Duration) (err error) {
	defer c.done(ctx, "CancelSlot", &err)
	return c.Fleet.CancelSlot(ctx, origin, at, interval)
}

func (c countedFleet) Pause(ctx context.Context, origin OriginKey, until time.Time) (err error) {
	defer c.done(ctx, "Pause", &err)
	return c.Fleet.Pause(ctx, origin, until)
}

func (c countedFleet) NextSlot(ctx context.Context, origin OriginKey, req SlotRequest) (at time.Time, err error) {
	defer c.done(ctx, "NextSlot", &err)
	return c.Fleet.NextSlot(ctx, origin, req)
}

func (c countedFleet) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (r Reservation, err error) {
	defer c.done(ctx, "Reserve", &err)
	return c.Fleet.Reserve(ctx, crawl, url, amount, limit)
}

func (c countedFleet) Settle(ctx context.Context, crawl, url string, reserved, charged int64) (err error) {
	defer c.done(ctx, "Settle", &err)
	return c.Fleet.Settle(ctx, crawl, url, reserved, charged)
}

func (c countedFleet) Release(ctx context.Context, crawl, url string, reserved int64) (err error) {
	defer c.done(ctx, "Release", &err)
	return c.Fleet.Release(ctx, crawl, url, reserved)
}
