package robots

import (
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"golang.org/x/time/rate"
)

// originID identifies an origin in the table without building a string:
// the scheme and the canonical host[:port], which a canonically spelled URL
// already holds as its u.Host.
type originID struct {
	https bool
	host  string
}

// origin is what a transport holds in memory for one origin: its parsed
// robots state and its politeness schedule. It is safe for concurrent use.
type origin struct {
	key string // scheme://host[:port], the origin's key in the store

	// st is read on every request and written only after a fetch, so it
	// is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// pausedUntil is the UnixNano time until which a Retry-After pauses
	// the origin, 0 when none; atomic so that an unpaced request takes no
	// lock.
	pausedUntil atomic.Int64

	// mu protects lim and delay.
	mu    sync.Mutex
	lim   *rate.Limiter // nil until the first request waits
	delay time.Duration // the limiter's interval
}

// current returns the origin's state, or nil before the first lookup.
func (o *origin) current() *state { return o.st.Load() }

// paused returns the time until which a Retry-After pauses the origin;
// the zero time when none does.
func (o *origin) paused() time.Time {
	if n := o.pausedUntil.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// robotsURL is where the origin's robots.txt is fetched.
func (o *origin) robotsURL() string { return o.key + "/robots.txt" }

// originTable holds the origins in memory, bounded both in count and in
// the bytes their parsed robots.txt take, forgetting the least useful
// first (otter's W-TinyLFU). A forgotten origin's record stays in the
// store. It is safe for concurrent use.
type originTable struct {
	cache *otter.Cache[originID, *origin]
}

// init makes a table of at most maxOrigins origins weighing at most
// maxBytes. Each origin weighs at least maxBytes/maxOrigins, so that one
// weight bound keeps both: otter bounds entries by count or by weight,
// not by both.
func (tb *originTable) init(maxOrigins int, maxBytes int64) {
	floor := uint64(max(maxBytes/int64(maxOrigins), 1))
	tb.cache = otter.Must(&otter.Options[originID, *origin]{
		MaximumWeight: uint64(maxBytes),
		Weigher: func(_ originID, o *origin) uint32 {
			w := uint64(stateOverhead)
			if st := o.current(); st != nil {
				w = uint64(st.weight())
			}
			return uint32(min(max(w, floor), math.MaxUint32))
		},
	})
}

// lookup returns the origin of u, creating it if needed.
func (tb *originTable) lookup(u *url.URL) (*origin, error) {
	if canonicalHost(u) {
		id := originID{https: u.Scheme == "https", host: u.Host}
		if o, ok := tb.cache.GetIfPresent(id); ok {
			return o, nil
		}
		return tb.add(id, u.Scheme+"://"+u.Host), nil
	}
	key, err := originOf(u)
	if err != nil {
		return nil, err
	}
	scheme, host, _ := strings.Cut(key, "://")
	id := originID{https: scheme == "https", host: host}
	if o, ok := tb.cache.GetIfPresent(id); ok {
		return o, nil
	}
	return tb.add(id, key), nil
}

// add inserts a new origin under id unless another goroutine did first.
func (tb *originTable) add(id originID, key string) *origin {
	o, _ := tb.cache.SetIfAbsent(id, &origin{key: key})
	return o
}

// set makes st o's state and weighs o again.
func (tb *originTable) set(o *origin, st *state) {
	o.st.Store(st)
	scheme, host, _ := strings.Cut(o.key, "://")
	id := originID{https: scheme == "https", host: host}
	if cur, ok := tb.cache.GetIfPresent(id); ok && cur == o {
		tb.cache.Set(id, o)
	}
}

// len returns the number of origins held.
func (tb *originTable) len() int {
	tb.cache.CleanUp()
	return tb.cache.EstimatedSize()
}
