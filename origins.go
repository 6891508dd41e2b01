package robots

import (
	"math"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/maypok86/otter/v2"
)

// originID identifies an origin in the table without building a string:
// the scheme and the canonical host[:port], which a canonically spelled URL
// already holds as its u.Host.
type originID struct {
	https bool
	host  string
}

// origin is what a transport holds in memory for one origin: its parsed
// robots state and a pointer to its politeness schedule, which the pacer
// owns. It is safe for concurrent use.
type origin struct {
	// key is the origin key, the origin's key in the store:
	// scheme://host[:port], or for a Host override
	// scheme://site|dialhost[:port] (target.go).
	key string

	// st is read on every request and written only after a fetch, so it
	// is an atomic pointer rather than another lock to take.
	st atomic.Pointer[state]
	// sched is the origin's schedule in the pacer's table, nil until the
	// first request looks it up.
	sched atomic.Pointer[schedule]
}

// current returns the origin's state, or nil before the first lookup.
func (o *origin) current() *state { return o.st.Load() }

// robotsURL is where the origin's robots.txt is fetched, and host the Host
// header to send ("" for the URL's own).
func (o *origin) robotsURL() (robotsURL, host string) {
	dial, host := splitOriginKey(o.key)
	return dial + "/robots.txt", host
}

// splitOriginKey returns the origin that key's robots.txt is fetched
// from and the Host header to send, "" when the URL's own host serves.
func splitOriginKey(key string) (origin, host string) {
	site, addr, ok := strings.Cut(key, "|")
	if !ok {
		return key, ""
	}
	scheme, host, _ := strings.Cut(site, "://")
	return scheme + "://" + addr, host
}

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
	return tb.lookupKey(key), nil
}

// lookupKey returns the origin of an origin key, creating it if needed.
func (tb *originTable) lookupKey(key string) *origin {
	id := idOf(key)
	if o, ok := tb.cache.GetIfPresent(id); ok {
		return o
	}
	return tb.add(id, key)
}

// idOf returns the table's id of an origin key. A Host override's key
// holds a "|", which no host does, so it never meets a plain origin's.
func idOf(key string) originID {
	scheme, host, _ := strings.Cut(key, "://")
	return originID{https: scheme == "https", host: host}
}

// add inserts a new origin under id unless another goroutine did first.
func (tb *originTable) add(id originID, key string) *origin {
	o, _ := tb.cache.SetIfAbsent(id, &origin{key: key})
	return o
}

// set makes st o's state and weighs o again.
func (tb *originTable) set(o *origin, st *state) {
	o.st.Store(st)
	id := idOf(o.key)
	if cur, ok := tb.cache.GetIfPresent(id); ok && cur == o {
		tb.cache.Set(id, o)
	}
}

// len returns the number of origins held.
func (tb *originTable) len() int {
	tb.cache.CleanUp()
	return tb.cache.EstimatedSize()
}

// lookupTarget returns the in-memory origin whose robots.txt decides tg.
func (t *Transport) lookupTarget(tg *target) (*origin, error) {
	if tg.key != "" {
		return t.origins.lookupKey(tg.key), nil
	}
	return t.origins.lookup(tg.url)
}
