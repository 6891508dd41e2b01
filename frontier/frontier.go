// Package frontier schedules a crawl's URLs on a robots.Transport: it
// holds them by origin and hands a worker a URL only when its origin is
// free, so that workers fetch at the politeness limit instead of sleeping
// inside RoundTrip, in whatever order the URLs were added.
//
// Each URL goes through the states below; the frontier never caches an
// allow or a refusal: the transport decides when the request is sent,
// against the robots.txt in force then.
//
//	state     how a URL gets there                                 what follows
//	Queued    Add; a Waiting URL whose time came                   InFlight, when Next hands it out
//	InFlight  Next                                                  Done, Refused, Waiting or Failed, by Done
//	Waiting   Done: a slot taken (*robots.SlotError), an           Queued at its At
//	          unreachable robots.txt, 429, 503, another 5xx,
//	          a network error, with attempts left
//	Done      Done: any other response (final; its status kept)     -
//	Refused   Done: a *robots.DisallowedError by a rule or an       -
//	          AI-use preference (final; the error kept)
//	Failed    Done: a retryable outcome with no attempt left        -
//	          (final; the last error or status kept)
//
// A worker's loop is Next, send the request through the transport with
// the Lease's Context, Done.
// Next waits, without polling, until the earliest origin is free, a URL
// is added, or its context ends. An origin is free when no worker holds
// one of its URLs and the transport's NextFree says a request could go
// now: that sees a Retry-After pause, the slots other members of a fleet
// took and the retry time of an unreachable robots.txt.
//
// In a fleet (several processes whose transports share one
// robots.Options.Fleet), give each process its own frontier and split
// the URLs by origin: hash the origin that Transport.Origin returns,
// modulo the processes, so that each origin is crawled by one of them.
// Every origin's pace is the fleet's either way. When two processes hold
// URLs of one origin, both frontiers may see the same slot free: one
// request gets it; the other, sent with its Lease's Context, waits at
// most Options.MaxWait for the next slot and otherwise fails with a
// *robots.SlotError, and its URL waits for the slot named, not counted
// as an attempt, while its worker takes another origin. The origin's
// pace is kept either way; what the overlap costs is those wakings.
package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/match"
)

// State is where a URL is in the frontier.
type State int

// The states of a URL; see the package documentation for the transitions.
const (
	Queued State = iota
	InFlight
	Waiting
	Done
	Refused
	Failed
)

var stateNames = [...]string{"queued", "in flight", "waiting", "done", "refused", "failed"}

// String returns the state's name, as the package documentation's table
// writes it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Final reports whether s is a state a URL never leaves.
func (s State) Final() bool { return s == Done || s == Refused || s == Failed }

// Options configure a Frontier. The zero value gives the defaults.
type Options struct {
	// MaxURLs bounds the URLs the frontier holds, those in a final state
	// included (they are remembered so that adding one again is a
	// duplicate). Default DefaultMaxURLs.
	MaxURLs int
	// MaxBytes bounds the bytes of those URLs' text. Each URL costs the
	// frontier a few hundred bytes more (its entry, its key for
	// duplicates and its place in its origin's queue), which MaxURLs
	// bounds. Default DefaultMaxBytes.
	MaxBytes int64
	// MaxAttempts is how many times a URL is sent before a retryable
	// outcome (an unreachable robots.txt, 429, 503, another 5xx, a network
	// error) fails it. A taken slot (*robots.SlotError) is not an attempt,
	// unless a redirect hop met it (http.Client names another URL), the
	// URL itself sent. Default DefaultMaxAttempts.
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the wait before a retry that no
	// Retry-After or robots.txt retry time sets: MinBackoff after the
	// first attempt, doubling with each, up to MaxBackoff. Defaults
	// DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Now is the clock, time.Now when nil; the transport's should be the
	// same. The frontier's own waits are on real timers: a crawl on a
	// test's clock runs in a testing/synctest bubble, whose clock is both
	// the frontier's and the transport's, rather than on a clock given
	// here and as the transport's Options.Now.
	Now func() time.Time
	// MaxWait is how long a request sent with Lease.Context may wait
	// inside RoundTrip for its politeness slot (see robots.WithMaxWait):
	// the frontier hands a URL out when its origin is free, so a longer
	// wait means another process took that slot, and the worker is better
	// given the URL back, Waiting for the next slot, than kept asleep.
	// It bounds the first send only: a redirect hop or a paid request
	// after it waits for its slot, as the first was sent. Default
	// DefaultMaxWait; negative: no bound.
	MaxWait time.Duration
	// Logger, when set, gets an Info line of the frontier's Stats at most
	// every LogEvery (default DefaultLogEvery), written as Done is called.
	Logger   *slog.Logger
	LogEvery time.Duration
}

// The defaults of Options.
const (
	DefaultMaxURLs     = 1_000_000
	DefaultMaxBytes    = 256 << 20
	DefaultMaxAttempts = 4
	DefaultMinBackoff  = 10 * time.Second
	DefaultMaxBackoff  = 10 * time.Minute
	DefaultLogEvery    = time.Minute
	DefaultMaxWait     = 10 * time.Millisecond
)

// ErrFull is returned by Add when the frontier holds Options.MaxURLs URLs
// or Options.MaxBytes bytes of them; nothing is dropped to make room.
var ErrFull = errors.New("frontier: full")

// ErrEmpty is returned by Next when every URL added is in a final state.
var ErrEmpty = errors.New("frontier: no URL left")

// Frontier holds a crawl's URLs. It is safe for concurrent use.
type Frontier struct {
	tr   transport
	opts Options

	mu      sync.Mutex
	byKey   map[string]*entry
	origins map[string]*origin
	ready   readyHeap // origins with a URL to hand out and no worker
	seq     uint64
	bytes   int64
	live    int // URLs not in a final state
	count   [len(stateNames)]int
	stats   counters
	logged  time.Time // when the last progress line was written
	// changed is closed, and replaced, when the ready heap's head may
	// have become earlier, to wake the workers waiting for it.
	changed chan struct{}
}

// transport is what the frontier uses of *robots.Transport.
type transport interface {
	http.RoundTripper
	NextFree(ctx context.Context, rawURL string) (time.Time, error)
	Origin(u *url.URL) (string, error)
	Robots(ctx context.Context, rawURL string) (robots.RobotsInfo, error)
}

// entry is one URL.
type entry struct {
	url      string
	key      string
	o        *origin
	priority int
	seq      uint64
	state    State
	attempts int
	at       time.Time // Waiting: when it is Queued again
	status   int       // Done, or Failed on a status
	err      error     // Refused, or Failed on an error
	index    int       // place in its origin's heap, -1 when out
}

// origin is one origin's URLs.
type origin struct {
	key     string
	queued  entryHeap // by priority, then order of adding
	waiting timeHeap  // by at
	free    time.Time // when NextFree last said the origin is free
	out     bool      // a worker holds one of its URLs
	lease   *Lease    // the lease of that URL
	index   int       // place in the ready heap, -1 when out
}

// New returns an empty Frontier that schedules by tr.
func New(tr *robots.Transport, opts Options) *Frontier {
	if opts.MaxURLs <= 0 {
		opts.MaxURLs = DefaultMaxURLs
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = DefaultLogEvery
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	return &Frontier{tr: tr, opts: opts, byKey: make(map[string]*entry), origins: make(map[string]*origin), changed: make(chan struct{})}
}

// Add queues rawURL, an absolute http or https URL, behind the URLs of its
// origin added before it. It reports false, and queues nothing, for a URL
// held already in any spelling the transport sends as the same request
// (case of the scheme and host, default port, percent-encoding, a
// fragment). It fails with ErrFull when the frontier is full.
func (f *Frontier) Add(rawURL string) (bool, error) {
	return f.AddPriority(rawURL, 0)
}

// AddPriority is Add with a priority: within an origin, a URL of a higher
// priority is handed out before those of a lower one, whenever added.
func (f *Frontier) AddPriority(rawURL string, priority int) (bool, error) {
	originKey, key, err := f.keyOf(rawURL)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey[key] != nil {
		return false, nil
	}
	if len(f.byKey) >= f.opts.MaxURLs || f.bytes+int64(len(rawURL)) > f.opts.MaxBytes {
		return false, fmt.Errorf("%w: %d URLs, %d bytes held (MaxURLs %d, MaxBytes %d)", ErrFull, len(f.byKey), f.bytes, f.opts.MaxURLs, f.opts.MaxBytes)
	}
	f.seq++
	e := &entry{url: rawURL, key: key, priority: priority, seq: f.seq, index: -1}
	f.insert(originKey, e, Queued)
	return true, nil
}

// insert adds e, a URL not held, to originKey's URLs in state st: Queued,
// Waiting until e.at, or a final one (a URL loaded). f.mu is held.
func (f *Frontier) insert(originKey string, e *entry, st State) {
	o := f.origins[originKey]
	if o == nil {
		o = &origin{key: originKey, index: -1}
		f.origins[originKey] = o
	}
	e.o = o
	f.byKey[e.key] = e
	f.bytes += int64(len(e.url))
	e.state = st
	f.count[st]++
	switch {
	case st.Final():
		return
	case st == Waiting:
		heap.Push(&o.waiting, e)
	default:
		heap.Push(&o.queued, e)
	}
	f.live++
	f.schedule(o)
}

// keyOf returns rawURL's origin and the key of the request it names.
func (f *Frontier) keyOf(rawURL string) (originKey, key string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", err
	}
	originKey, err = f.tr.Origin(u)
	if err != nil {
		return "", "", err
	}
	target := u.RequestURI()
	if u.Opaque != "" {
		return "", "", fmt.Errorf("frontier: %q is not a hierarchical URL", rawURL)
	}
	return originKey, originKey + string(match.AppendPath(nil, target)), nil
}

// Lease is a URL handed to a worker by Next. Give it back with Done.
type Lease struct {
	// URL is the URL to request, as added.
	URL string
	// Attempt counts the sends of URL, this one included.
	Attempt int
	e       *entry
	maxWait time.Duration
}

// redirected reports whether err, a request's for u, is a redirect hop's:
// http.Client names the URL of the request that failed, a hop's when a
// hop failed.
func redirected(err error, u string) bool {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return false
	}
	sent, perr := url.Parse(u)
	if perr != nil {
		return false
	}
	first := sent.String()
	if _, ok := sent.User.Password(); ok {
		// As net/http names it.
		first = strings.Replace(first, sent.User.String()+"@", sent.User.Username()+":***@", 1)
	}
	return ue.URL != first
}

// Context returns ctx for the lease's request: its wait for a politeness
// slot is bounded by Options.MaxWait, so that a slot another process took
// fails the request at once with a *robots.SlotError, which Done turns
// into a wait for the next slot.
func (l *Lease) Context(ctx context.Context) context.Context {
	if l.maxWait < 0 {
		return ctx
	}
	return robots.WithMaxWait(ctx, l.maxWait)
}

// Next waits until an origin with a URL is free and hands out that
// origin's first URL, holding the origin until Done. It returns ErrEmpty
// when every URL added is in a final state, or ctx's error.
func (f *Frontier) Next(ctx context.Context) (*Lease, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.mu.Lock()
		if f.live == 0 {
			f.mu.Unlock()
			return nil, ErrEmpty
		}
		changed := f.changed
		var wait <-chan time.Time
		if len(f.ready) > 0 {
			o := f.ready[0]
			now := f.opts.Now()
			f.promote(o, now)
			if at := o.readyAt(); !at.After(now) && o.queued.Len() > 0 {
				heap.Pop(&f.ready)
				e := heap.Pop(&o.queued).(*entry)
				f.move(e, InFlight)
				e.attempts++
				l := &Lease{URL: e.url, Attempt: e.attempts, e: e, maxWait: f.opts.MaxWait}
				o.out, o.lease = true, l
				f.mu.Unlock()
				return l, nil
			}
			d := max(o.readyAt().Sub(now), time.Millisecond)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			wait = timer.C
		}
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-wait:
		}
	}
}

// Done gives l, a Lease of f's, back with the outcome of its request
// through the transport: resp and err as RoundTrip (or http.Client.Do) returned them.
// It reads resp's status and Retry-After only; the caller closes the
// body. A 429 or 503 whose Retry-After the transport keeps as a pause
// (robots.RetryAfter) waits for the pause, At its end; any other 429
// or 5xx waits the backoff. It returns the URL's state after it: a
// final one, or Waiting when it is tried again. A lease given back
// twice changes nothing the second time.
func (f *Frontier) Done(ctx context.Context, l *Lease, resp *http.Response, err error) State {
	e := l.e
	now := f.opts.Now()
	if err == nil && resp == nil {
		err = errors.New("frontier: Done was given neither a response nor an error")
	}
	var slot *robots.SlotError
	var refused *robots.DisallowedError
	st, at := Done, now
	attempt, backoff, paused := true, false, false
	switch {
	case errors.As(err, &slot):
		// A slot another member took: not an attempt of the URL, unless
		// a redirect hop met it, the URL itself sent.
		st, at, attempt = Waiting, slot.At, redirected(err, l.URL)
	case errors.As(err, &refused) && refused.Unreachable:
		// The transport backs off its robots.txt retries itself.
		st, at = Waiting, refused.RetryAt
	case errors.As(err, &refused):
		st = Refused
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The worker is stopping, cancelled or at its deadline: the URL
		// goes back untried.
		st, attempt = Waiting, false
	case err != nil:
		st, backoff = Waiting, true
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		// A Retry-After the transport keeps pauses the origin that
		// answered, which NextFree below carries; any other is retried
		// on the backoff.
		_, paused = robots.RetryAfter(resp, now)
		st, backoff = Waiting, !paused
	}

	// Asked outside the lock, with the origin still out: with a fleet
	// store it is a round trip. Asked even when the origin has no URL
	// left, so that one added later waits for it too.
	free, ferr := f.tr.NextFree(ctx, l.URL)
	if ferr != nil {
		free = time.Time{}
	}
	pauseEnd := free
	if paused && resp.Request != nil && resp.Request.Response != nil {
		// Paused after a redirect: the origin that answered is paused,
		// and the URL waits for it.
		if t, err := f.tr.NextFree(ctx, resp.Request.URL.String()); err == nil {
			pauseEnd = latest(free, t)
		}
	}

	f.mu.Lock()
	if e.state != InFlight || e.o.lease != l {
		defer f.mu.Unlock()
		return e.state
	}
	e.o.lease = nil
	if !attempt {
		e.attempts--
	}
	if st == Waiting && attempt {
		if backoff {
			at = latest(at, now.Add(f.backoff(e.attempts)))
		} else {
			// A pause: the URL waits for it, as kept by Save.
			at = latest(at, pauseEnd)
		}
		if e.attempts >= f.opts.MaxAttempts {
			st = Failed
		}
	}
	f.stats.outcome(now, resp, err, refused, st, st == Waiting)
	e.err, e.status = err, 0
	if err == nil {
		e.status = resp.StatusCode
	}
	f.move(e, st)
	o := e.o
	if st == Waiting {
		e.at = at
		heap.Push(&o.waiting, e)
	}
	var progress *Stats
	if f.opts.Logger != nil && now.Sub(f.logged) >= f.opts.LogEvery {
		f.logged = now
		st := f.statsLocked(now)
		progress = &st
	}
	f.mu.Unlock()
	if progress != nil {
		progress.log(ctx, f.opts.Logger)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	o.out = false
	o.free = free
	f.schedule(o)
	return st
}

// backoff returns the wait before the retry that follows attempt n.
func (f *Frontier) backoff(n int) time.Duration {
	d := f.opts.MinBackoff
	for i := 1; i < n && d < f.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, f.opts.MaxBackoff)
}

// move puts e in state st, counting it. f.mu is held.
func (f *Frontier) move(e *entry, st State) {
	f.count[e.state]--
	if !e.state.Final() && st.Final() {
		f.live--
	}
	e.state = st
	f.count[st]++
}

// promote queues o's waiting URLs whose time came. f.mu is held.
func (f *Frontier) promote(o *origin, now time.Time) {
	for o.waiting.Len() > 0 && !o.waiting[0].at.After(now) {
		e := heap.Pop(&o.waiting).(*entry)
		f.move(e, Queued)
		heap.Push(&o.queued, e)
	}
}

// schedule puts o in the ready heap, or fixes its place, when no worker
// holds it and it has a URL; f.mu is held. It wakes the waiting workers
// when o is the new head or no URL is left.
func (f *Frontier) schedule(o *origin) {
	// An origin left without URLs is kept, with when it is free, for
	// the URLs added to it later.
	switch {
	case o.out || o.queued.Len()+o.waiting.Len() == 0:
		if o.index >= 0 {
			heap.Remove(&f.ready, o.index)
		}
	case o.index >= 0:
		heap.Fix(&f.ready, o.index)
	default:
		heap.Push(&f.ready, o)
	}
	// The waiting workers sleep toward the head's time, or for ErrEmpty:
	// only a new head, or nothing left, is news to them.
	if o.index == 0 || f.live == 0 {
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// readyAt is when o can next hand out a URL: when its origin is free and
// it has a queued one, or its first waiting one is due.
func (o *origin) readyAt() time.Time {
	at := o.free
	if o.queued.Len() == 0 && o.waiting.Len() > 0 {
		at = latest(at, o.waiting[0].at)
	}
	return at
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// URL is what the frontier knows of one URL.
type URL struct {
	URL      string
	State    State
	Attempts int
	// At is, for a Waiting URL, when it is queued again.
	At time.Time
	// Status is the last response's status (0 when there was none).
	Status int
	// Err is, for a Refused URL, the *robots.DisallowedError; for a
	// Failed or Waiting one, the last error, if any.
	Err error
}

// Lookup returns what the frontier knows of rawURL, in any spelling Add
// takes as the same, and whether it holds it.
func (f *Frontier) Lookup(rawURL string) (URL, bool) {
	_, key, err := f.keyOf(rawURL)
	if err != nil {
		return URL{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.byKey[key]
	if e == nil {
		return URL{}, false
	}
	return e.public(), true
}

// Each calls fn with every URL the frontier holds, in no particular
// order, until fn returns false. The frontier is locked meanwhile: fn must
// not call it.
func (f *Frontier) Each(fn func(URL) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.byKey {
		if !fn(e.public()) {
			return
		}
	}
}

func (e *entry) public() URL {
	u := URL{URL: e.url, State: e.state, Attempts: e.attempts, Status: e.status, Err: e.err}
	if e.state == Waiting {
		u.At = e.at
	}
	return u
}

// entryHeap orders an origin's queued URLs by priority, then by order of
// adding.
type entryHeap []*entry

func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	if h[i].priority != h[j].priority {
		return h[i].priority > h[j].priority
	}
	return h[i].seq < h[j].seq
}
func (h entryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index, h[j].index = i, j }
func (h *entryHeap) Push(x any)   { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}

// timeHeap orders an origin's waiting URLs by when they are due.
type timeHeap []*entry

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index, h[j].index = i, j }
func (h *timeHeap) Push(x any)        { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *timeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}

// readyHeap orders the origins that have URLs and no worker by when they
// can next hand one out.
type readyHeap []*origin

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].readyAt().Before(h[j].readyAt()) }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index, h[j].index = i, j }
func (h *readyHeap) Push(x any)        { o := x.(*origin); o.index = len(*h); *h = append(*h, o) }
func (h *readyHeap) Pop() any {
	old := *h
	o := old[len(old)-1]
	old[len(old)-1] = nil
	o.index = -1
	*h = old[:len(old)-1]
	return o
}
