package robots

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crawlkit/robots/policy"
)

// fleetStore is an in-memory Fleet, as a Redis store provides one,
// with hooks for a test to play another process. Records are kept under
// their plain keys (recordKeyOf), so that Get and Set reach them too.
type fleetStore struct {
	*memoryLedger

	// The hooks are set before the store is first used and called
	// without mu held, so that they may use the store.
	onGet   func(key string)
	onSwap  func(key string) bool // false: fail this swap
	onLease func(origin OriginKey)

	// mu protects the fields below.
	mu       sync.Mutex
	data     map[string][]byte
	leases   map[OriginKey]string // origin -> token
	leaseErr error
	swaps    int
	last     map[OriginKey]time.Time // each origin's last slot
	paused   map[OriginKey]time.Time
}

func newFleetStore() *fleetStore {
	return &fleetStore{memoryLedger: newMemoryLedger(), data: map[string][]byte{}, leases: map[OriginKey]string{}, last: map[OriginKey]time.Time{}, paused: map[OriginKey]time.Time{}}
}

// recordKeyOf is the plain key of origin's record.
func recordKeyOf(origin OriginKey) string { return plainKey(RecordKey{Origin: origin}) }

func (s *fleetStore) Get(key string) ([]byte, bool) {
	if s.onGet != nil {
		s.onGet(key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

func (s *fleetStore) Set(key string, v []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = v
}

func (s *fleetStore) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data, key)
}

func (s *fleetStore) Load(_ context.Context, key RecordKey) ([]byte, bool, error) {
	v, ok := s.Get(plainKey(key))
	return v, ok, nil
}

func (s *fleetStore) Swap(_ context.Context, key RecordKey, old, new []byte) (bool, error) {
	k := plainKey(key)
	s.mu.Lock()
	s.swaps++
	s.mu.Unlock()
	if s.onSwap != nil && !s.onSwap(k) {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.data[k]
	if old == nil && ok || old != nil && (!ok || !bytes.Equal(cur, old)) {
		return false, nil
	}
	s.data[k] = new
	return true, nil
}

func (s *fleetStore) Lease(_ context.Context, origin OriginKey, token string, _ time.Duration) (bool, error) {
	if s.onLease != nil {
		s.onLease(origin)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaseErr != nil {
		return false, s.leaseErr
	}
	if _, held := s.leases[origin]; held {
		return false, nil
	}
	s.leases[origin] = token
	return true, nil
}

func (s *fleetStore) Unlease(_ context.Context, origin OriginKey, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases[origin] == token {
		delete(s.leases, origin)
	}
	return nil
}

func (s *fleetStore) ReserveSlot(_ context.Context, origin OriginKey, req SlotRequest) (Slot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := latest(req.Now, req.NotBefore, s.paused[origin])
	if last, ok := s.last[origin]; ok {
		at = latest(at, last.Add(req.Interval))
	}
	if !req.Limit.IsZero() && at.After(req.Limit) {
		return Slot{At: at, Members: 1}, nil
	}
	s.last[origin] = at
	return Slot{At: at, Reserved: true, Members: 1}, nil
}

func (s *fleetStore) CancelSlot(_ context.Context, origin OriginKey, at time.Time, interval time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last[origin].Equal(at) {
		s.last[origin] = at.Add(-interval)
	}
	return nil
}

func (s *fleetStore) Pause(_ context.Context, origin OriginKey, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused[origin] = latest(s.paused[origin], until)
	return nil
}

func (s *fleetStore) NextSlot(_ context.Context, origin OriginKey, req SlotRequest) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := latest(req.Now, req.NotBefore, s.paused[origin])
	if last, ok := s.last[origin]; ok && req.Interval > 0 {
		at = latest(at, last.Add(req.Interval))
	}
	return at, nil
}

var _ Fleet = (*fleetStore)(nil)

// TestFleetLease checks that a transport finding another process's lease
// on an origin waits for that process's record instead of fetching, and
// that a store whose lease fails falls back to its own fetch, never to
// allowing everything.
func TestFleetLease(t *testing.T) {
	t.Run("waits for the holder's record", func(t *testing.T) {
		s := newSite(t, serve(200, "User-agent: *\nDisallow: /\n"))
		c := newClock()
		store := newFleetStore()
		origin, _ := originOfString(s.URL)
		key := recordKeyOf(origin)
		store.leases[origin] = "another process"
		gets := 0
		store.onGet = func(k string) {
			if k != key {
				return
			}
			if gets++; gets == 3 {
				// The other process stores its fetch and lets go.
				rec := freshRecord(c.Now())
				store.Set(key, rec.encode())
				store.Unlease(context.Background(), origin, "another process")
			}
		}
		tr := newTestTransport(t, c, Options{Fleet: store})
		if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("/private: %v, want refused by the holder's record", err)
		}
		if err := tr.Check(context.Background(), s.URL+"/public"); err != nil {
			t.Errorf("/public: %v, want allowed by the holder's record", err)
		}
		if s.robotsHits.Load() != 0 {
			t.Errorf("%d fetches, want none: the lease holder fetched", s.robotsHits.Load())
		}
		waits := c.Waits()
		if len(waits) == 0 || waits[0] != leasePollMin {
			t.Errorf("waits %v, want polling from %v", waits, leasePollMin)
		}
	})
	t.Run("takes the lease and gives it back", func(t *testing.T) {
		s := newSite(t, serve(200, privateRobots))
		store := newFleetStore()
		tr := newTestTransport(t, newClock(), Options{Fleet: store})
		tr.Check(context.Background(), s.URL+"/x")
		if s.robotsHits.Load() != 1 || len(store.leases) != 0 {
			t.Errorf("%d fetches, leases left %v", s.robotsHits.Load(), store.leases)
		}
	})
	t.Run("record saved just before the lease is used", func(t *testing.T) {
		s := newSite(t, serve(200, "User-agent: *\nDisallow: /\n"))
		c := newClock()
		store := newFleetStore()
		store.onLease = func(origin OriginKey) {
			// The previous holder saves and lets go between this
			// transport's load and its lease.
			rec := freshRecord(c.Now())
			store.Set(recordKeyOf(origin), rec.encode())
		}
		tr := newTestTransport(t, c, Options{Fleet: store})
		if err := tr.Check(context.Background(), s.URL+"/public"); err != nil {
			t.Errorf("/public: %v, want allowed by the saved record", err)
		}
		if s.robotsHits.Load() != 0 || len(store.leases) != 0 {
			t.Errorf("%d fetches, leases left %v; want none", s.robotsHits.Load(), store.leases)
		}
	})
	t.Run("lease error falls back to fetching", func(t *testing.T) {
		s := newSite(t, serve(503, ""))
		store := newFleetStore()
		store.leaseErr = errors.New("redis down")
		tr := newTestTransport(t, newClock(), Options{Fleet: store})
		var de *DisallowedError
		if err := tr.Check(context.Background(), s.URL+"/x"); !errors.As(err, &de) || !de.Unreachable {
			t.Errorf("Check: %v, want refused as unreachable", err)
		}
		if s.robotsHits.Load() != 1 {
			t.Errorf("%d fetches, want this process's own", s.robotsHits.Load())
		}
	})
}

// TestFleetSwapMerges checks that a save racing another writer merges
// with what that writer stored: the outage recorded here keeps the good
// copy the other stored meanwhile.
func TestFleetSwapMerges(t *testing.T) {
	s := newSite(t, serve(503, ""))
	c := newClock()
	store := newFleetStore()
	origin, _ := originOfString(s.URL)
	key := recordKeyOf(origin)
	raced := false
	store.onSwap = func(k string) bool {
		if raced {
			return true
		}
		raced = true
		good := record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), FetchedAt: c.Now().Add(-time.Hour), Expires: c.Now()}
		store.Set(k, good.encode())
		return false
	}
	tr := newTestTransport(t, c, Options{Fleet: store})
	tr.Check(context.Background(), s.URL+"/x")
	raw, _ := store.Get(key)
	rec, err := decodeRecord(raw)
	if err != nil || rec.Outcome != Unreachable || rec.Good == nil || string(rec.Good.Body) != privateRobots {
		t.Errorf("stored %+v, %v; want the outage with the other writer's good copy", rec, err)
	}
	if store.swaps < 2 {
		t.Errorf("%d swaps, want a retry after the lost race", store.swaps)
	}
}

// plainCache is an httpcache.Cache and nothing more (no compare-and-swap),
// with a hook run after each Get for a test to play another writer.
type plainCache struct {
	*MemoryCache
	afterGet func(key string)
}

func (c plainCache) Get(key string) ([]byte, bool) {
	v, ok := c.MemoryCache.Get(key)
	if c.afterGet != nil {
		c.afterGet(key)
	}
	return v, ok
}

// TestPlainCacheSaveMerges checks that a save to a Cache without
// compare-and-swap merges with what another writer stored since this
// transport loaded the record: the outage recorded here keeps the good
// copy the other stored meanwhile.
func TestPlainCacheSaveMerges(t *testing.T) {
	s := newSite(t, serve(503, ""))
	c := newClock()
	origin, _ := originOfString(s.URL)
	key := recordKeyOf(origin)
	cache := plainCache{MemoryCache: NewMemoryCache(100, 1<<20)}
	raced := false
	cache.afterGet = func(k string) {
		if k != key || raced {
			return
		}
		// Right after this transport finds no record, another writer
		// stores its good copy.
		raced = true
		good := record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), FetchedAt: c.Now().Add(-time.Hour), Expires: c.Now()}
		cache.Set(k, good.encode())
	}
	tr := newTestTransport(t, c, Options{Cache: cache, FallbackAfter: time.Hour})
	if err := tr.Check(context.Background(), s.URL+"/x"); !errors.Is(err, ErrDisallowed) {
		t.Fatalf("Check = %v, want refused as unreachable", err)
	}
	raw, _ := cache.MemoryCache.Get(key)
	rec, err := decodeRecord(raw)
	if err != nil || rec.Outcome != Unreachable || rec.Good == nil || string(rec.Good.Body) != privateRobots {
		t.Errorf("stored %+v, %v; want the outage with the other writer's good copy", rec, err)
	}
	// Once the outage is long enough, the other writer's copy decides,
	// as this transport holds it parsed.
	c.Advance(time.Hour)
	var de *DisallowedError
	if err := tr.Check(context.Background(), s.URL+"/private/x"); !errors.As(err, &de) || de.Rule == nil {
		t.Errorf("after the fallback: /private/x %v, want refused by the other writer's rule", err)
	}
	if err := tr.Check(context.Background(), s.URL+"/public"); err != nil {
		t.Errorf("after the fallback: /public %v, want allowed", err)
	}
}

// TestVaryUserAgent checks that a robots.txt served with Vary:
// User-Agent is kept per user agent in a shared store, and one without it
// is shared.
func TestVaryUserAgent(t *testing.T) {
	for _, vary := range []bool{true, false} {
		name := "without Vary"
		if vary {
			name = "Vary: User-Agent"
		}
		t.Run(name, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if vary {
					w.Header().Set("Vary", "Accept-Encoding, User-Agent")
				}
				if strings.HasPrefix(r.Header.Get("User-Agent"), "ABot") {
					io.WriteString(w, "User-agent: *\nDisallow: /a\n")
					return
				}
				io.WriteString(w, "User-agent: *\nDisallow: /b\n")
			})
			store := NewMemoryCache(100, 1<<20)
			c := newClock()
			a := newTestTransport(t, c, Options{Cache: store, UserAgent: "ABot/1"})
			b := newTestTransport(t, c, Options{Cache: store, UserAgent: "BBot/1"})
			ctx := context.Background()
			if err := a.Check(ctx, s.URL+"/a"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("ABot /a: %v, want refused", err)
			}
			errB := b.Check(ctx, s.URL+"/b")
			if vary && !errors.Is(errB, ErrDisallowed) || !vary && errB != nil {
				t.Errorf("BBot /b: %v", errB)
			}
			wantFetches := int64(1)
			if vary {
				wantFetches = 2
			}
			if s.robotsHits.Load() != wantFetches {
				t.Errorf("%d fetches, want %d", s.robotsHits.Load(), wantFetches)
			}
			a2 := newTestTransport(t, c, Options{Cache: store, UserAgent: "ABot/1"})
			if err := a2.Check(ctx, s.URL+"/a"); !errors.Is(err, ErrDisallowed) {
				t.Errorf("second ABot /a: %v, want refused from the store", err)
			}
			if s.robotsHits.Load() != wantFetches {
				t.Errorf("second ABot fetched again")
			}
		})
	}
}

// TestNewerRecordKept checks that a record written by a newer version is
// ignored, not deleted or overwritten: the transport fetches for itself
// and leaves the newer transports' record in place.
func TestNewerRecordKept(t *testing.T) {
	s := newSite(t, serve(200, privateRobots))
	store := newFleetStore()
	origin, _ := originOfString(s.URL)
	newer := []byte("robots-record v3\n{}")
	store.Set(recordKeyOf(origin), newer)
	deleted := false
	tr := newTestTransport(t, newClock(), Options{Cache: deleteSpy{store, &deleted}})
	if err := tr.Check(context.Background(), s.URL+"/private"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("Check: %v", err)
	}
	if raw, _ := store.Get(recordKeyOf(origin)); deleted || !bytes.Equal(raw, newer) {
		t.Errorf("the newer record was deleted or overwritten: %q", raw)
	}
}

// deleteSpy records whether Delete was called.
type deleteSpy struct {
	*fleetStore
	deleted *bool
}

func (d deleteSpy) Delete(key string) { *d.deleted = true; d.fleetStore.Delete(key) }

// TestRecordEncoding checks that a record survives its stored form with
// one copy of each body, and that any cut of it reads as missing.
func TestRecordEncoding(t *testing.T) {
	now := newClock().Now()
	good := record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), Size: int64(len(privateRobots)), FetchedAt: now, Expires: now.Add(time.Hour), ETag: `"v1"`}
	rec := record{Outcome: Unreachable, Status: 503, FetchedAt: now, Since: now, RetryAt: now.Add(time.Minute), Failures: 2, Err: "robots: down", Good: &good}
	data := rec.encode()
	if n := bytes.Count(data, []byte(privateRobots)); n != 1 {
		t.Errorf("body stored %d times, want once", n)
	}
	back, err := decodeRecord(data)
	if err != nil || back.Good == nil || string(back.Good.Body) != privateRobots || back.Good.ETag != `"v1"` || back.Failures != 2 || !back.Since.Equal(now) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for i := range len(data) {
		if _, err := decodeRecord(data[:i]); err == nil {
			t.Fatalf("record cut at %d of %d bytes read as valid", i, len(data))
		}
	}
	if _, err := decodeRecord([]byte("robots-record v3\n{}")); !errors.Is(err, errNewerRecord) {
		t.Errorf("newer version: %v, want errNewerRecord", err)
	}
}

// TestRecordHeadIsJSON checks that a record's header is written exactly
// as json.Marshal writes the record, for every field set and unset and
// for strings and times that need escaping or care, so that the stored
// form stays the JSON that every version reads.
func TestRecordHeadIsJSON(t *testing.T) {
	strs := []string{"", "plain", `"etag-v1"`, `W/"weak"`, `back\slash`, "tab\there", "line\nbreak", "<a>&b", "héllo", "\xff\xfe broken", "sep\u2028arator", "ctl\x01\x7f"}
	times := []time.Time{
		{},
		time.Date(2026, 12, 2, 6, 15, 0, 0, time.UTC),
		time.Date(2026, 12, 2, 6, 15, 0, 123456789, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 1000, time.FixedZone("", -(7*3600+30*60))),
		time.Date(2026, 6, 1, 0, 0, 0, 500, time.FixedZone("CEST", 2*3600)),
	}
	rng := rand.New(rand.NewPCG(29, 30))
	pick := func() record {
		return record{
			Outcome: Outcome(rng.IntN(4)), Status: []int{0, 200, 304, 503}[rng.IntN(4)],
			Size: []int64{0, 1, 512000}[rng.IntN(3)], Truncated: rng.IntN(2) == 0,
			FetchedAt: times[rng.IntN(len(times))], Expires: times[rng.IntN(len(times))],
			URL: strs[rng.IntN(len(strs))], ETag: strs[rng.IntN(len(strs))], LastModified: strs[rng.IntN(len(strs))],
			Vary: rng.IntN(2) == 0, Since: times[rng.IntN(len(times))], RetryAt: times[rng.IntN(len(times))],
			Failures: rng.IntN(3), Err: strs[rng.IntN(len(strs))], BodyLen: rng.IntN(2) * 300,
		}
	}
	recs := []record{{}, {Outcome: Parsed, FetchedAt: times[1]}}
	for range 2000 {
		r := pick()
		if rng.IntN(3) == 0 {
			g := pick()
			r.Good = &g
		}
		recs = append(recs, r)
	}
	for _, r := range recs {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.appendHead(nil); !bytes.Equal(got, want) {
			t.Fatalf("header of %+v:\n got %s\nwant %s", r, got, want)
		}
	}
}

// FuzzDecodeRecord holds decodeRecord to whatever a store hands back, a
// damaged record or another writer's included: it never panics, and a
// record it reads is one encode writes so that it reads back as the same
// bytes, the header's JSON spelled as this version spells it.
func FuzzDecodeRecord(f *testing.F) {
	at := time.Date(2026, 12, 6, 23, 0, 0, 123456789, time.FixedZone("", 3600))
	good := record{Outcome: Parsed, Status: 200, FetchedAt: at, Expires: at.Add(time.Hour), ETag: `W/"v1"`, Body: []byte("User-agent: *\nDisallow: /x\n")}
	for _, r := range []record{
		good,
		{Outcome: Unreachable, FetchedAt: at, Since: at, RetryAt: at.Add(time.Minute), Failures: 2, Err: "503 \xff", Good: &good},
		{Outcome: Unavailable, Status: 404, FetchedAt: at, URL: "https://site.example/robots.txt"},
	} {
		f.Add(r.encode())
	}
	f.Add([]byte(recordMagic + `{"outcome":0,"fetchedAt":"2026-12-06T23:00:00Z","bodyLen":-1}` + "\n"))
	f.Add([]byte("robots-record v9\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(data)
		if err != nil {
			return
		}
		once := r.encode()
		back, err := decodeRecord(once)
		if err != nil {
			t.Fatalf("the record read from %q, written again as %q, does not read back: %v", data, once, err)
		}
		if twice := back.encode(); !bytes.Equal(once, twice) {
			t.Fatalf("the record read from %q is written as %q, then as %q", data, once, twice)
		}
	})
}

// TestStoredRecordReadToMaxSize checks that a record another member
// stored from a larger MaxSize is read as this transport reads a file:
// nothing past its own MaxSize decides, whoever fetched first.
func TestStoredRecordReadToMaxSize(t *testing.T) {
	filler := strings.Repeat("# "+strings.Repeat("x", 77)+"\n", (policy.MaxSize+100<<10)/80)
	body := "User-agent: *\nAllow: /\n" + filler + "Disallow: /p\n"
	for _, bigFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("the larger MaxSize fetches first: %v", bigFirst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				site := newFakeSite(serve(200, body))
				fleet := NewMemoryFleet()
				big := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: -1, MaxSize: 4 << 20, Fleet: fleet})
				small := NewTransport(site, Options{UserAgent: "ExampleBot", MinDelay: -1, Fleet: fleet})
				first, second := small, big
				if bigFirst {
					first, second = big, small
				}
				first.Check(context.Background(), "http://site.example/p")
				second.Check(context.Background(), "http://site.example/p")
				if n := len(site.robotsHits()); n != 1 {
					t.Fatalf("%d robots.txt fetches, want 1, shared through the fleet", n)
				}
				if err := small.Check(context.Background(), "http://site.example/p"); err != nil {
					t.Errorf("the default MaxSize: Check = %v, want /p allowed, its Disallow past %d bytes", err, policy.MaxSize)
				}
				if bigFirst {
					if err := big.Check(context.Background(), "http://site.example/p"); !errors.Is(err, ErrDisallowed) {
						t.Errorf("MaxSize 4 MiB: Check = %v, want /p refused", err)
					}
				}
			})
		})
	}
}
