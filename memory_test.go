package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gregjones/httpcache"

	"github.com/crawlkit/robots/policy"
)

// TestMemoryCache checks the bounds and the least-recently-used order of
// MemoryCache.
func TestMemoryCache(t *testing.T) {
	t.Run("entry limit", func(t *testing.T) {
		c := NewMemoryCache(2, 0)
		for _, k := range []string{"a", "b", "c", "d"} {
			c.Set(k, []byte(k))
		}
		if c.Len() > 2 {
			t.Errorf("Len = %d, want at most 2", c.Len())
		}
	})
	t.Run("entry limit with a byte limit", func(t *testing.T) {
		c := NewMemoryCache(2, 1<<20)
		for _, k := range []string{"a", "b", "c", "d"} {
			c.Set(k, []byte(k))
		}
		if c.Len() > 2 || c.Bytes() > 4 {
			t.Errorf("Len, Bytes = %d, %d; want at most 2, 4", c.Len(), c.Bytes())
		}
	})
	t.Run("byte limit counts keys and values", func(t *testing.T) {
		c := NewMemoryCache(0, 10)
		c.Set("a", []byte("1234"))
		c.Set("b", []byte("1234"))
		c.Set("c", []byte("1234"))
		if c.Len() != 2 || c.Bytes() != 10 {
			t.Errorf("Len, Bytes = %d, %d; want 2, 10", c.Len(), c.Bytes())
		}
	})
	t.Run("value at the byte limit kept", func(t *testing.T) {
		c := NewMemoryCache(0, 10)
		c.Set("a", []byte("012345678"))
		if _, ok := c.Get("a"); !ok || c.Bytes() != 10 {
			t.Errorf("a value of exactly the byte limit not kept: Bytes %d", c.Bytes())
		}
	})
	t.Run("value over the byte limit not kept", func(t *testing.T) {
		c := NewMemoryCache(0, 10)
		c.Set("a", []byte("1"))
		c.Set("a", []byte("0123456789"))
		if _, ok := c.Get("a"); ok || c.Bytes() != 0 {
			t.Errorf("oversized value kept, or old value left: Bytes %d", c.Bytes())
		}
	})
	t.Run("the least recently used goes first", func(t *testing.T) {
		c := NewMemoryCache(3, 0)
		for _, k := range []string{"a", "b", "c"} {
			c.Set(k, []byte(k))
		}
		c.Get("a") // b is now the least recently used
		c.Set("d", []byte("d"))
		for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
			if _, ok := c.Get(k); ok != want {
				t.Errorf("%s held = %v, want %v", k, ok, want)
			}
		}
	})
	t.Run("a value just set outlasts as many newer ones as the cache holds", func(t *testing.T) {
		// Keys set once each, as a broad crawl's origins are: none may
		// turn the newest away, however often the older ones were read.
		const n = 200
		c := NewMemoryCache(n, 0)
		for i := range 10 * n {
			c.Set(fmt.Sprint("old", i), []byte("x"))
			c.Get(fmt.Sprint("old", i))
		}
		c.Set("new", []byte("x"))
		for i := range n - 1 {
			c.Set(fmt.Sprint("newer", i), []byte("x"))
		}
		if _, ok := c.Get("new"); !ok {
			t.Errorf("a value set %d values ago is gone, in a cache of %d", n-1, n)
		}
	})
	t.Run("replace and delete keep the byte count", func(t *testing.T) {
		c := NewMemoryCache(0, 0)
		c.Set("a", []byte("12"))
		c.Set("a", []byte("1234"))
		c.Set("b", []byte("1"))
		c.Delete("a")
		c.Delete("missing")
		if c.Len() != 1 || c.Bytes() != 2 {
			t.Errorf("Len, Bytes = %d, %d; want 1, 2", c.Len(), c.Bytes())
		}
	})
}

// TestBoundedMemory checks that 200,000 origins passing through a
// transport whose store and origin table are capped at 10,000 leave no
// more than that held.
func TestBoundedMemory(t *testing.T) {
	const origins, limit = 50000, 2500
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		body := privateRobots + "# " + r.URL.Host + "\n"
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(body)),
			Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	store := NewMemoryCache(limit, 0)
	c := newClock()
	tr := NewTransport(base, Options{Cache: store, MaxOrigins: limit, Now: c.Now, Sleep: c.Sleep})
	ctx := context.Background()
	before := liveHeap()
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < origins; i += workers {
				if err := tr.Check(ctx, fmt.Sprintf("http://host%d.example/private", i)); !errors.Is(err, ErrDisallowed) {
					t.Errorf("origin %d: %v", i, err)
					return
				}
			}
		})
	}
	// Minutes of checks under -race on a loaded machine: a ceiling of its
	// own, still well under go test's timeout.
	waitGroupWithin(t, &wg, 5*time.Minute, "every worker's checks")
	if got := tr.Stats().Fetches[Parsed]; got != origins {
		t.Errorf("%d fetches, want %d", got, origins)
	}
	if store.Len() > limit || tr.Stats().Origins > limit {
		t.Errorf("store holds %d entries, transport %d origins; want at most %d", store.Len(), tr.Stats().Origins, limit)
	}
	// 2,500 origins of a few hundred bytes each; what 50,000 would hold
	// is well over this ceiling.
	grown := liveHeap() - before
	if grown > 16<<20 {
		t.Errorf("heap grew by %d MiB", grown>>20)
	}
	// Held to here, or the collector frees what the check is about.
	runtime.KeepAlive(tr)
	runtime.KeepAlive(store)
}

// TestRecentOriginNotFetchedAgain checks that, with the default store,
// an origin met again after fewer new origins than the store holds
// (2*MaxOrigins) is not fetched again, however often the origins met
// before it were: the origin table may forget it, the store keeps its
// record, the most recently used.
func TestRecentOriginNotFetchedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxOrigins = 50
		base := &robotsLog{status: 200, body: privateRobots}
		tr := NewTransport(base, Options{UserAgent: "ExampleBot", MaxOrigins: maxOrigins})
		ctx := context.Background()
		check := func(host string) {
			if err := tr.Check(ctx, "http://"+host+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Fatalf("Check on %s = %v, want ErrDisallowed", host, err)
			}
		}
		// Origins met often first, as a crawl's busiest sites are, all
		// of them before the probe.
		for i := range 2 * maxOrigins {
			for range 3 {
				check(fmt.Sprintf("before%d.example", i))
			}
		}
		check("probe.example")
		for i := range 2*maxOrigins - 1 {
			check(fmt.Sprintf("after%d.example", i))
		}
		check("probe.example")
		var n int
		for _, u := range base.fetched() {
			if strings.Contains(u, "probe.example") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("probe.example's robots.txt fetched %d times, want 1: met again after %d new origins, the store holding %d", n, 2*maxOrigins-1, 2*maxOrigins)
		}
	})
}

// TestSharedStore runs the store conformance checks against each store a
// transport can use.
func TestSharedStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() httpcache.Cache
	}{
		{"httpcache.MemoryCache", func() httpcache.Cache { return httpcache.NewMemoryCache() }},
		{"MemoryCache", func() httpcache.Cache { return NewMemoryCache(100, 1<<20) }},
	} {
		t.Run(tc.name, func(t *testing.T) { storeConformance(t, tc.store) })
	}
}

// storeConformance checks that transports sharing a store share fetched
// robots state, that a forgotten origin is reloaded from the store without
// a fetch, and that a damaged record is refetched.
func storeConformance(t *testing.T, newStore func() httpcache.Cache) {
	ctx := context.Background()
	t.Run("transports sharing a store share fetches", func(t *testing.T) {
		s := newSite(t, serve(200, privateRobots))
		store, c := newStore(), newClock()
		a := newTestTransport(t, c, Options{Cache: store})
		b := newTestTransport(t, c, Options{Cache: store})
		a.Check(ctx, s.URL+"/x")
		if err := b.Check(ctx, s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("second transport: %v, want refused by the shared rules", err)
		}
		if s.robotsHits.Load() != 1 {
			t.Errorf("%d fetches, want 1", s.robotsHits.Load())
		}
	})
	t.Run("forgotten origin reloaded from the store", func(t *testing.T) {
		s1 := newSite(t, serve(200, privateRobots))
		s2 := newSite(t, serve(200, privateRobots))
		tr := newTestTransport(t, newClock(), Options{Cache: newStore(), MaxOrigins: 1})
		tr.Check(ctx, s1.URL+"/x")
		tr.Check(ctx, s2.URL+"/x")
		if err := tr.Check(ctx, s1.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("reloaded origin: %v, want refused", err)
		}
		if s1.robotsHits.Load() != 1 || tr.Stats().Origins != 1 {
			t.Errorf("%d fetches and %d origins held, want 1 and 1", s1.robotsHits.Load(), tr.Stats().Origins)
		}
	})
	t.Run("unreachable state shared with its retry time", func(t *testing.T) {
		s := newSite(t, serve(503, ""))
		store, c := newStore(), newClock()
		a := newTestTransport(t, c, Options{Cache: store})
		b := newTestTransport(t, c, Options{Cache: store})
		a.Check(ctx, s.URL+"/x")
		var de *DisallowedError
		if err := b.Check(ctx, s.URL+"/x"); !errors.As(err, &de) || !de.Unreachable || de.Err == nil {
			t.Errorf("second transport: %v, want refused as unreachable", err)
		}
		if s.robotsHits.Load() != 1 {
			t.Errorf("%d fetches, want 1", s.robotsHits.Load())
		}
	})
	t.Run("damaged record refetched", func(t *testing.T) {
		s := newSite(t, serve(200, privateRobots))
		store := newStore()
		key, _ := originOfString(s.URL)
		good := freshRecord(newClock().Now()).encode()
		junk := []string{"{", recordMagic + `{"outcome":9}` + "\n", recordMagic + `{"outcome":1,"good":{"outcome":1}}` + "\n",
			// A record cut short by a broken store.
			string(good[:len(good)-5]),
			// Not a record at all: a 30-day refusal must not come of it.
			recordMagic + `{"outcome":3,"fetchedAt":"2025-03-01T12:00:00Z","since":"2025-03-01T12:00:00Z","retryAt":"2025-03-31T12:00:00Z"`}
		for _, j := range junk {
			store.Set(recordKeyOf(key), []byte(j))
			tr := newTestTransport(t, newClock(), Options{Cache: store})
			if err := tr.Check(ctx, s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("record %s: %v, want refused after a fresh fetch", j, err)
			}
		}
		if got := s.robotsHits.Load(); got != int64(len(junk)) {
			t.Errorf("%d fetches, want one for each damaged record", got)
		}
	})
}

func originOfString(raw string) (OriginKey, error) {
	req, err := http.NewRequest("GET", raw, nil)
	if err != nil {
		return "", err
	}
	id, err := identify(req.URL, "")
	return id.key(), err
}

// bigRobots returns a robots.txt of about size bytes of distinct rules,
// the kind a hostile or generated file holds: every line a rule with a
// wildcard, none a comment, so that its parse costs the most per byte.
func bigRobots(size int, salt string) []byte {
	var b bytes.Buffer
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < size-64; i++ {
		fmt.Fprintf(&b, "Disallow: /%s/%d/*.php$\n", salt, i)
		if i%7 == 0 {
			fmt.Fprintf(&b, "Allow: /%s/%d/ok\n", salt, i)
		}
	}
	return policy.Truncate(b.Bytes(), size)
}

// liveHeap returns the bytes of live heap after a collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestMemoryBoundedInBytes checks that origins serving 500 KiB files are
// held within the byte budgets: the parsed files within MaxRobotsBytes
// (by an estimate that must not undercount what a parse really takes),
// the records within the store's bytes. The files are the kinds whose
// parse costs the most per byte: distinct rules with wildcards, and
// lines crawlers ignore, each of which keeps a warning longer than the
// line.
func TestMemoryBoundedInBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 150 MB of robots.txt")
	}
	// Budgets of a tenth of the defaults, so that a hundred files
	// overflow them several times over and the test stays quick under
	// -race on a loaded machine.
	const origins, size = 100, 500 << 10
	const robotsBytes, storeBytes = DefaultMaxRobotsBytes / 10, DefaultCacheBytes / 10
	repeat := func(head, line string) []byte {
		return policy.Truncate([]byte(head+strings.Repeat(line, size/len(line))), size)
	}
	for _, tt := range []struct {
		name string
		body []byte
		want error // of a Check of /p/1/x.php
	}{
		{"distinct rules", bigRobots(size, "p"), ErrDisallowed},
		{"patterns with a bad escape", repeat("User-agent: *\n", "Disallow: /%zz%\n"), nil},
		{"rules before any User-agent, CR line ends", repeat("", "Disallow: /x\r"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// What a parse really costs, against its estimate.
			before := liveHeap()
			parsed := policy.Parse(tt.body)
			grown := liveHeap() - before
			runtime.KeepAlive(parsed)
			estimate := int64(len(tt.body))*parsedFactor + warningsWeight(parsed)
			if grown > estimate {
				t.Fatalf("a parse takes %d bytes (%.1f per byte of text), over its estimate %d", grown, float64(grown)/float64(len(tt.body)), estimate)
			}
			t.Logf("a parse takes %.1f bytes per byte of text (estimate %.1f)", float64(grown)/float64(len(tt.body)), float64(estimate)/float64(len(tt.body)))
			parsed = nil

			base := rtFunc(func(r *http.Request) (*http.Response, error) {
				b := append([]byte("# "+r.URL.Host+"\n"), tt.body[:len(tt.body)-len(r.URL.Host)-3]...)
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(b)),
					Body: io.NopCloser(bytes.NewReader(b))}, nil
			})
			c := newClock()
			tr := NewTransport(base, Options{Now: c.Now, Sleep: c.Sleep, MinDelay: -1, MaxRobotsBytes: robotsBytes,
				Cache: NewMemoryCache(2*DefaultMaxOrigins, storeBytes)})
			before = liveHeap()
			for i := range origins {
				if err := tr.Check(context.Background(), fmt.Sprintf("http://host%d.example/p/1/x.php", i)); !errors.Is(err, tt.want) && err != tt.want {
					t.Fatalf("origin %d: %v, want %v", i, err, tt.want)
				}
			}
			grown = liveHeap() - before
			const budget = robotsBytes + storeBytes
			const margin = 16 << 20
			t.Logf("%d origins of %d KiB: heap grew %d MiB (budgets %d MiB), %d origins held", origins, size>>10, grown>>20, budget>>20, tr.Stats().Origins)
			if grown > budget+margin {
				t.Errorf("heap grew %d MiB, over the budgets' %d MiB and a %d MiB margin", grown>>20, budget>>20, margin>>20)
			}
			runtime.KeepAlive(tr)
		})
	}
}
