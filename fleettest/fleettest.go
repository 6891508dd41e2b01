// Package fleettest checks an implementation of robots.Fleet against its
// contract, as testing/fstest checks an fs.FS: a store's own tests call
// Run in one line, from any module.
//
// The suite covers the four parts of a Fleet, each case a subtest named
// by the rule it checks: the records (Load and the compare-and-swap of
// Swap, an empty value no absent one, the variant keys apart from every
// other origin's, values byte for byte), the fetch lease (taken once,
// refused to others while held, taken again by its holder for a new ttl,
// given up only by its holder, freed when its ttl runs out and not
// later, apart from the origin's records), the pace (pace.go: arrival order and spacing, to the
// nanosecond, the earliest and the latest slot a request can use, giving
// a slot back as it lasts, pauses and what outlives them, Held, each origin's pace its own, members counted
// over their window, on fast and slow origins and when refused, a
// member's last slot that a store restarted empty must not lose, and the
// epoch, refusals and first writes included) and the ledger (ledger.go:
// reservations within the limit each names, a URL paid once in a crawl,
// settling, releasing, what is left). Swaps, leases and unleases, slots
// and slots given back, pauses, reservations, settles and releases asked
// at once check that each is one atomic step of the store. A store that keeps no epoch (Slot.Epoch empty) or counts no
// members (Slot.Members 0) skips what those cases check of them.
//
// Times are the callers' (robots.SlotRequest.Now), so the pace cases run
// on a timeline of their own and never sleep; only the lease's ttl is
// waited out, polled against a deadline.
//
// A store's test opens a fresh, empty store for every case:
//
//	func TestFleet(t *testing.T) {
//		fleettest.Run(t, func(t *testing.T) robots.Fleet {
//			return mystore.New(mystore.Options{Prefix: mystore.NewPrefix()})
//		})
//	}
package fleettest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots"
)

// Run runs the suite against the Fleets that open returns, one per case
// and a second one in the case of a store that comes back empty. Each call
// of open must return a fresh, empty store (for a store on a shared
// server, one under a key prefix of its own) that stays usable until t
// ends; open may call t.Cleanup to release it.
func Run(t *testing.T, open func(t *testing.T) robots.Fleet) {
	t.Helper()
	for _, group := range []struct {
		name  string
		cases []testCase
	}{
		{"records", recordCases},
		{"lease", leaseCases},
		{"pace", paceCases},
		{"ledger", ledgerCases},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, tc := range group.cases {
				t.Run(tc.name, func(t *testing.T) {
					c := &fleetCase{
						T:      t,
						open:   open,
						origin: "https://fleettest.example",
						t0:     time.Now().Truncate(time.Microsecond),
					}
					c.f = open(t)
					tc.run(c)
				})
			}
		})
	}
}

// testCase is one rule of the contract and its check.
type testCase struct {
	name string
	run  func(c *fleetCase)
}

// fleetCase is what one case runs against: the Fleet opened for it, the
// origin it uses and the time its timeline starts at.
type fleetCase struct {
	*testing.T
	open   func(t *testing.T) robots.Fleet
	f      robots.Fleet
	origin robots.OriginKey
	t0     time.Time
}

// ctx is the context of every call: the case's own, so that a store that
// hangs ends with the test.
func (c *fleetCase) ctx() context.Context { return c.Context() }

func (c *fleetCase) load(key robots.RecordKey) ([]byte, bool) {
	c.Helper()
	v, found, err := c.f.Load(c.ctx(), key)
	if err != nil {
		c.Fatalf("Load(%+v): %v", key, err)
	}
	return v, found
}

func (c *fleetCase) swap(key robots.RecordKey, old, new []byte) bool {
	c.Helper()
	ok, err := c.f.Swap(c.ctx(), key, old, new)
	if err != nil {
		c.Fatalf("Swap(%+v, %q, %q): %v", key, old, new, err)
	}
	return ok
}

// wantRecord checks that key holds want, or nothing when want is nil.
func (c *fleetCase) wantRecord(key robots.RecordKey, want []byte) {
	c.Helper()
	got, found := c.load(key)
	switch {
	case want == nil && found:
		c.Errorf("Load(%+v) = %q, found; want none", key, got)
	case want != nil && !found:
		c.Errorf("Load(%+v) found none; want %q", key, want)
	case want != nil && !bytes.Equal(got, want):
		c.Errorf("Load(%+v) = %q; want %q", key, got, want)
	}
}

func (c *fleetCase) lease(origin robots.OriginKey, token string, ttl time.Duration) bool {
	c.Helper()
	held, err := c.f.Lease(c.ctx(), origin, token, ttl)
	if err != nil {
		c.Fatalf("Lease(%q, %q, %v): %v", origin, token, ttl, err)
	}
	return held
}

func (c *fleetCase) unlease(origin robots.OriginKey, token string) {
	c.Helper()
	if err := c.f.Unlease(c.ctx(), origin, token); err != nil {
		c.Fatalf("Unlease(%q, %q): %v", origin, token, err)
	}
}

// race makes n calls at once, call(i) the i-th, as the members of a
// fleet do, and returns how many reported true. A store that reads and
// then writes in two steps lets several through.
func (c *fleetCase) race(n int, call func(i int) (bool, error)) int {
	c.Helper()
	var won atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ok, err := call(i)
			if err != nil {
				c.Errorf("call %d of %d at once: %v", i, n, err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		c.Fatalf("%d calls made at once had not all returned after a minute", n)
	}
	return int(won.Load())
}

// on returns the case on another origin of the same store.
func (c *fleetCase) on(origin robots.OriginKey) *fleetCase {
	other := *c
	other.origin = origin
	return &other
}

// blob is a value of every byte, the ones a text protocol could mangle
// included.
var blob = func() []byte {
	b := make([]byte, 0, 1<<16)
	for len(b) < cap(b) {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return b
}()

var recordCases = []testCase{
	{"Load of a missing key finds none", func(c *fleetCase) {
		c.wantRecord(robots.RecordKey{Origin: c.origin}, nil)
		c.wantRecord(robots.RecordKey{Origin: c.origin, Variant: "examplebot"}, nil)
	}},
	{"Swap with old nil stores only when the key is absent", func(c *fleetCase) {
		key := robots.RecordKey{Origin: c.origin}
		if !c.swap(key, nil, []byte("first")) {
			c.Fatal("Swap(nil, first) on an absent key did not store")
		}
		if c.swap(key, nil, []byte("second")) {
			c.Error("Swap(nil, second) on a stored key stored")
		}
		c.wantRecord(key, []byte("first"))
		empty := robots.RecordKey{Origin: c.origin + "x"}
		if !c.swap(empty, nil, []byte{}) {
			c.Fatal("Swap(nil, empty) on an absent key did not store")
		}
		if c.swap(empty, nil, []byte("second")) {
			c.Error("Swap(nil, second) over a stored empty value stored: an empty value is a value, not an absent key")
		}
		c.wantRecord(empty, []byte{})
	}},
	{"Swap with a stale old fails and stores nothing", func(c *fleetCase) {
		key := robots.RecordKey{Origin: c.origin}
		if !c.swap(key, nil, []byte("v1")) || !c.swap(key, []byte("v1"), []byte("v2")) {
			c.Fatal("Swap with the stored value as old did not store")
		}
		if c.swap(key, []byte("v1"), []byte("v3")) {
			c.Error("Swap(v1, v3) with v2 stored stored")
		}
		if c.swap(key, []byte{}, []byte("v3")) {
			c.Error("Swap(empty, v3) with v2 stored stored")
		}
		c.wantRecord(key, []byte("v2"))
	}},
	{"Swap with an old value stores nothing when the key is absent", func(c *fleetCase) {
		key := robots.RecordKey{Origin: c.origin}
		for _, old := range [][]byte{{}, []byte("v1")} {
			if c.swap(key, old, []byte("v2")) {
				c.Errorf("Swap(%q, v2) on an absent key stored: old nil is the only absent", old)
			}
		}
		c.wantRecord(key, nil)
	}},
	{"a value stored or loaded is the store's own copy", func(c *fleetCase) {
		key := robots.RecordKey{Origin: c.origin}
		v := []byte("first")
		if !c.swap(key, nil, v) {
			c.Fatal("Swap(nil, first) on an absent key did not store")
		}
		v[0] = 'X' // the caller reuses its buffer
		c.wantRecord(key, []byte("first"))
		got, _ := c.load(key)
		if len(got) > 0 {
			got[0] = 'Y' // the caller changes what it loaded
		}
		c.wantRecord(key, []byte("first"))
	}},
	{"a variant's key is separate from the plain one and from other variants", func(c *fleetCase) {
		plain := robots.RecordKey{Origin: c.origin}
		a := robots.RecordKey{Origin: c.origin, Variant: "a"}
		b := robots.RecordKey{Origin: c.origin, Variant: "b"}
		if !c.swap(plain, nil, []byte("plain")) {
			c.Fatal("Swap of the plain key did not store")
		}
		c.wantRecord(a, nil)
		if !c.swap(a, nil, []byte("variant a")) {
			c.Fatal("Swap(nil, ...) of a variant did not store beside the plain key")
		}
		c.wantRecord(b, nil)
		c.wantRecord(plain, []byte("plain"))
		c.wantRecord(a, []byte("variant a"))
		other := robots.RecordKey{Origin: c.origin + "x"}
		c.wantRecord(other, nil)
		// An origin that ends as another origin's key and variant would
		// if the two were only joined.
		c.wantRecord(robots.RecordKey{Origin: c.origin + "a"}, nil)
		c.wantRecord(robots.RecordKey{Origin: c.origin + " a"}, nil)
		c.wantRecord(robots.RecordKey{Origin: c.origin + ":a"}, nil)
	}},
	{"values round-trip byte for byte, the empty one included", func(c *fleetCase) {
		for i, v := range [][]byte{{}, []byte("record\x00\xff\r\n bytes"), blob} {
			key := robots.RecordKey{Origin: c.origin, Variant: fmt.Sprint(i)}
			if !c.swap(key, nil, v) {
				c.Fatalf("Swap(nil, %d bytes) did not store", len(v))
			}
			got, found := c.load(key)
			if !found || !bytes.Equal(got, v) {
				c.Errorf("Load after storing %d bytes = %d bytes (found %v), not the same", len(v), len(got), found)
			}
			// The value stored is the old a writer swaps against.
			if !c.swap(key, v, []byte("next")) {
				c.Errorf("Swap with the %d bytes loaded as old did not store", len(v))
			}
		}
	}},
	{"of Swaps made at once with the same old value, one stores", func(c *fleetCase) {
		key := robots.RecordKey{Origin: c.origin}
		if n := c.race(32, func(i int) (bool, error) {
			return c.f.Swap(c.ctx(), key, nil, []byte(fmt.Sprint("first ", i)))
		}); n != 1 {
			c.Errorf("32 Swaps at once on an absent key: %d stored, want 1", n)
		}
		old, _ := c.load(key)
		if n := c.race(32, func(i int) (bool, error) {
			return c.f.Swap(c.ctx(), key, old, []byte(fmt.Sprint("second ", i)))
		}); n != 1 {
			c.Errorf("32 Swaps at once from the value stored: %d stored, want 1", n)
		}
	}},
}

var leaseCases = []testCase{
	{"the lease is taken once", func(c *fleetCase) {
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease of a free origin refused")
		}
		if c.lease(c.origin, "b", time.Minute) {
			c.Error("a second Lease was granted while the first is held")
		}
		if !c.lease(c.origin+"x", "b", time.Minute) {
			c.Error("Lease of another origin refused: each origin has a lease of its own")
		}
	}},
	{"another token is refused while the lease is held", func(c *fleetCase) {
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease of a free origin refused")
		}
		for _, tok := range []string{"b", "c", "b"} {
			if c.lease(c.origin, tok, time.Minute) {
				c.Errorf("Lease by %s granted while a holds it", tok)
			}
		}
	}},
	{"the holder taking its lease again holds it, for ttl from then", func(c *fleetCase) {
		// The first ttl runs out while the second, taken again at once,
		// still runs: a store that refuses the holder, or keeps the
		// first expiry, fails. Only the short ttl is waited out; a
		// machine paused for a minute would be the only false alarm.
		const short = 50 * time.Millisecond
		if !c.lease(c.origin, "a", short) {
			c.Fatal("Lease of a free origin refused")
		}
		taken := time.Now()
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease by its holder refused: a transport whose Unlease was lost would wait out its own lease")
		}
		time.Sleep(time.Until(taken.Add(2 * short)))
		if c.lease(c.origin, "b", time.Minute) {
			c.Errorf("Lease by b granted %v after a's lease of %v was taken again for a minute: the holder's second Lease did not renew it", time.Since(taken), short)
		}
		if !c.lease(c.origin, "a", time.Minute) {
			c.Error("Lease by its holder refused the third time")
		}
	}},
	{"Unlease by a non-holder does nothing", func(c *fleetCase) {
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease of a free origin refused")
		}
		c.unlease(c.origin, "b")
		c.unlease(c.origin+"x", "a")
		if c.lease(c.origin, "c", time.Minute) {
			c.Error("Lease granted after a non-holder's Unlease: a's lease was given up")
		}
	}},
	{"Unlease by the holder frees the lease", func(c *fleetCase) {
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease of a free origin refused")
		}
		c.unlease(c.origin, "a")
		if !c.lease(c.origin, "b", time.Minute) {
			c.Error("Lease refused after the holder's Unlease")
		}
	}},
	{"a lease whose ttl ran out is free", func(c *fleetCase) {
		const ttl = 50 * time.Millisecond
		if !c.lease(c.origin, "a", ttl) {
			c.Fatal("Lease of a free origin refused")
		}
		taken := time.Now()
		for !c.lease(c.origin, "b", time.Minute) {
			if waited := time.Since(taken); waited > ttl+5*time.Second {
				c.Fatalf("Lease still refused %v after a lease of %v was taken", waited, ttl)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}},
	{"a lease is held for its ttl, not longer", func(c *fleetCase) {
		// A lease held past its ttl (rounded up to whole seconds, say)
		// keeps every member from renewing a robots.txt whose holder
		// died. Only a refusal seen after the ttl and a margin, counted
		// from when the lease was surely taken, fails: a machine that
		// pauses makes the polls late, never a refusal early.
		const ttl, margin = 400 * time.Millisecond, 250 * time.Millisecond
		if !c.lease(c.origin, "a", ttl) {
			c.Fatal("Lease of a free origin refused")
		}
		taken := time.Now()
		for {
			asked := time.Since(taken)
			if c.lease(c.origin, "b", time.Minute) {
				return
			}
			if asked > ttl+margin {
				c.Fatalf("Lease refused %v after a lease of %v was taken: held past its ttl", asked, ttl)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}},
	{"an Unlease as the lease passes to another leaves the other's held", func(c *fleetCase) {
		// Unlease checks the holder and frees the lease in one step: one
		// that checks and then frees can free the lease a new holder
		// took in between, and a third member fetches too.
		const ttl = 20 * time.Millisecond
		for k := range 5 {
			c := c.on(robots.OriginKey(fmt.Sprintf("%s:%d", c.origin, 7000+k)))
			if !c.lease(c.origin, "a", ttl) {
				c.Fatal("Lease of a free origin refused")
			}
			// A store may free a lease a little after its ttl (see "a
			// lease is held for its ttl, not longer"): until b holds it,
			// the two are asked again.
			taken := time.Now()
			for {
				time.Sleep(ttl)
				if c.race(2, func(i int) (bool, error) {
					if i == 0 {
						return false, c.f.Unlease(c.ctx(), c.origin, "a")
					}
					return c.f.Lease(c.ctx(), c.origin, "b", time.Minute)
				}) == 1 {
					break
				}
				if waited := time.Since(taken); waited > ttl+5*time.Second {
					c.Fatalf("try %d: Lease by b still refused %v after a's lease of %v was taken", k, waited, ttl)
				}
			}
			if c.lease(c.origin, "c", time.Minute) {
				c.Fatalf("try %d: Lease by c granted while b holds the lease: a's Unlease, made as b took it, freed b's", k)
			}
		}
	}},
	{"the lease and the origin's records are kept apart", func(c *fleetCase) {
		// A store keeping an origin's lease in its record's place would
		// lose the record to every fetch, and every member fetch again.
		plain, variant := robots.RecordKey{Origin: c.origin}, robots.RecordKey{Origin: c.origin, Variant: "a"}
		if !c.swap(plain, nil, []byte("record")) || !c.swap(variant, nil, []byte("variant")) {
			c.Fatal("Swap(nil, ...) on absent keys did not store")
		}
		if !c.lease(c.origin, "a", time.Minute) {
			c.Fatal("Lease refused on an origin with records stored: the lease is no record")
		}
		c.wantRecord(plain, []byte("record"))
		c.wantRecord(variant, []byte("variant"))
		c.unlease(c.origin, "a")
		c.wantRecord(plain, []byte("record"))
		c.wantRecord(variant, []byte("variant"))
		if !c.lease(c.origin, "b", time.Minute) {
			c.Fatal("Lease refused after the holder's Unlease")
		}
		if !c.swap(plain, []byte("record"), []byte("record 2")) {
			c.Fatal("Swap of the record stored did not store while the lease is held")
		}
		if c.lease(c.origin, "c", time.Minute) {
			c.Error("Lease by c granted after a record was stored while b held the lease: storing the record freed it")
		}
		c.wantRecord(plain, []byte("record 2"))
	}},
	{"of Leases asked at once by different tokens, one is granted", func(c *fleetCase) {
		if n := c.race(32, func(i int) (bool, error) {
			return c.f.Lease(c.ctx(), c.origin, fmt.Sprint("token ", i), time.Minute)
		}); n != 1 {
			c.Errorf("32 Leases at once on a free origin: %d granted, want 1", n)
		}
	}},
}
