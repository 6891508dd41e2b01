// Package fleettest checks an implementation of robots.Fleet against its
// contract, as testing/fstest checks an fs.FS: a store's own tests call
// Run in one line, from any module.
//
// The suite covers the four parts of a Fleet, each case a subtest named
// by the rule it checks: the records (Load and the compare-and-swap of
// Swap, the variant keys, values byte for byte), the fetch lease (taken
// once, refused to others while held, taken again by its holder for a
// new ttl, given up only by its holder, freed when its ttl runs out) and
// the pace (arrival order and spacing, the
// earliest and the latest slot a request can use, giving a slot back,
// pauses, members on fast and slow origins, a member's last slot that a
// store restarted empty must not lose, and the epoch) and the ledger
// (reservations within a limit, a URL paid once in a crawl, settling,
// releasing, and concurrent reservations that never pass the limit).
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

// reserve reserves on the case's Fleet.
func (c *fleetCase) reserve(req robots.SlotRequest) robots.Slot {
	c.Helper()
	return c.reserveOn(c.f, req)
}

func (c *fleetCase) reserveOn(p robots.Pace, req robots.SlotRequest) robots.Slot {
	c.Helper()
	slot, err := p.ReserveSlot(c.ctx(), c.origin, req)
	if err != nil {
		c.Fatalf("ReserveSlot(%+v): %v", req, err)
	}
	return slot
}

func (c *fleetCase) next(req robots.SlotRequest) time.Time {
	c.Helper()
	at, err := c.f.NextSlot(c.ctx(), c.origin, req)
	if err != nil {
		c.Fatalf("NextSlot(%+v): %v", req, err)
	}
	return at
}

func (c *fleetCase) cancel(at time.Time, interval time.Duration) {
	c.Helper()
	if err := c.f.CancelSlot(c.ctx(), c.origin, at, interval); err != nil {
		c.Fatalf("CancelSlot(%v, %v): %v", at, interval, err)
	}
}

func (c *fleetCase) pause(until time.Time) {
	c.Helper()
	if err := c.f.Pause(c.ctx(), c.origin, until); err != nil {
		c.Fatalf("Pause(%v): %v", until, err)
	}
}

// want checks a slot's time and whether it was reserved.
func (c *fleetCase) want(slot robots.Slot, at time.Time, reserved bool) {
	c.Helper()
	if !slot.At.Equal(at) || slot.Reserved != reserved {
		c.Errorf("slot %v (reserved %v), want %v (reserved %v)", c.since(slot.At), slot.Reserved, c.since(at), reserved)
	}
}

// wantNext checks NextSlot's answer.
func (c *fleetCase) wantNext(req robots.SlotRequest, at time.Time) {
	c.Helper()
	if got := c.next(req); !got.Equal(at) {
		c.Errorf("NextSlot(%+v) = %v, want %v", req, c.since(got), c.since(at))
	}
}

// since names a time by its offset on the case's timeline.
func (c *fleetCase) since(at time.Time) string { return "t0" + signed(at.Sub(c.t0)) }

func signed(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
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
}

// d is the interval of the pace cases.
const d = time.Second

var paceCases = []testCase{
	{"slots follow one another in arrival order, an interval apart", func(c *fleetCase) {
		for k := range 4 {
			c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(time.Duration(k)*d), true)
		}
	}},
	{"no slot before NotBefore", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: c.t0.Add(5 * d), Interval: d}), c.t0.Add(5*d), true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(6*d), true)
	}},
	{"a slot past the limit is not reserved", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Limit: c.t0.Add(d / 2)}), c.t0.Add(d), false)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
	}},
	{"Limit equal to Now reserves only a slot free now", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Limit: c.t0}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Limit: c.t0}), c.t0.Add(d), false)
		later := c.t0.Add(d / 2)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: later, Interval: d, Limit: later}), c.t0.Add(d), false)
		free := c.t0.Add(d)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: free, Interval: d, Limit: free}), free, true)
	}},
	{"the last slot given back is reserved again", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		c.cancel(c.t0.Add(d), d)
		// Asked between the slot before and the one given back: exactly
		// the slot given back, as if it had never been reserved.
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(d / 2), Interval: d}), c.t0.Add(d), true)
	}},
	{"CancelSlot of a slot that is no longer the last gives nothing back", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		c.cancel(c.t0, d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(2*d), true)
		c.cancel(c.t0.Add(time.Hour), d) // never reserved
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(3*d), true)
	}},
	{"a raised interval spaces the next slot by the new interval from the last", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: 5 * d}, c.t0.Add(6*d))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: 5 * d}), c.t0.Add(6*d), true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: 5 * d}), c.t0.Add(11*d), true)
	}},
	{"a raised interval counts from the last slot, not at the old rate", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		half := c.t0.Add(d / 2)
		c.wantNext(robots.SlotRequest{Now: half, Interval: 10 * d}, c.t0.Add(10*d))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: half, Interval: 10 * d}), c.t0.Add(10*d), true)
	}},
	{"a raised interval after slots at the old one counts from the last slot", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		later := c.t0.Add(d + d/2)
		c.wantNext(robots.SlotRequest{Now: later, Interval: 10 * d}, c.t0.Add(11*d))
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: later, Interval: 10 * d}), c.t0.Add(11*d), true)
	}},
	{"a slot reserved without an interval is the last the next one counts from", func(c *fleetCase) {
		// A member pacing by no delay still sends: the next member's
		// interval counts from that send, not from the slot before it.
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		between := c.t0.Add(d + d/2)
		c.wantNext(robots.SlotRequest{Now: between, Interval: d}, c.t0.Add(2*d))
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: between}), between, true)
		c.wantNext(robots.SlotRequest{Now: between, Interval: d}, between.Add(d))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: between, Interval: d}), between.Add(d), true)
	}},
	{"a slot reserved with a spread lasts until the slot plus the spread", func(c *fleetCase) {
		const spread = 100 * time.Millisecond
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Limit: c.t0, Spread: spread}), c.t0, true)
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d}, c.t0.Add(d+spread))
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0.Add(d), Interval: d, Limit: c.t0.Add(d)}), c.t0.Add(d+spread), false)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), c.t0.Add(d+spread), true)
	}},
	{"NextSlot counts from Held", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		held := c.t0.Add(10 * d)
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d, Held: held}, held.Add(d))
	}},
	{"a pause holds every later slot, and NextSlot tells it", func(c *fleetCase) {
		until := c.t0.Add(time.Hour)
		c.pause(until)
		c.wantNext(robots.SlotRequest{Now: c.t0}, until)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), until, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), until.Add(d), true)
	}},
	{"a pause never shrinks", func(c *fleetCase) {
		until := c.t0.Add(time.Hour)
		c.pause(until)
		c.pause(c.t0.Add(time.Minute))
		c.pause(c.t0)
		c.wantNext(robots.SlotRequest{Now: c.t0}, until)
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d}, until)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), until, true)
	}},
	{"NextSlot reserves nothing", func(c *fleetCase) {
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d}, c.t0)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		for range 2 {
			c.wantNext(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}, c.t0.Add(d))
		}
		c.wantNext(robots.SlotRequest{Now: c.t0, NotBefore: c.t0.Add(5 * d), Interval: d}, c.t0.Add(5*d))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
	}},
	{"NextSlot with a zero interval is the later of Now and the pause, whatever the last slot", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: c.t0.Add(10 * d), Interval: d}), c.t0.Add(10*d), true)
		c.wantNext(robots.SlotRequest{Now: c.t0}, c.t0)
		c.wantNext(robots.SlotRequest{Now: c.t0, Held: c.t0.Add(20 * d)}, c.t0)
		c.pause(c.t0.Add(5 * d))
		c.wantNext(robots.SlotRequest{Now: c.t0}, c.t0.Add(5*d))
	}},
	{"NextSlot counts no member", func(c *fleetCase) {
		c.next(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d})
		if slot := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}); slot.Members > 1 {
			c.Errorf("after NextSlot by b, a's reservation counts %d members; want a alone", slot.Members)
		}
	}},
	{"no slot within an interval of the member's last sent", func(c *fleetCase) {
		held := c.t0.Add(10 * d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Held: held}), held.Add(d), true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), held.Add(2*d), true)
	}},
	{"a Held past the last slot reserved spaces the next from Held", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		held := c.t0.Add(5 * d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: held, Interval: d, Held: held}), held.Add(d), true)
	}},
	{"Held raises the last slot even when nothing is reserved", func(c *fleetCase) {
		held := c.t0.Add(10 * d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Held: held, Limit: c.t0.Add(-d)}), held.Add(d), false)
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d}, held.Add(d))
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), held.Add(d), true)
	}},
	{"members are counted within their window, and drop out after it", func(c *fleetCase) {
		window := robots.MemberWindowFor(d)
		members := func(m string, now time.Time) int {
			return c.reserve(robots.SlotRequest{Member: m, Now: now, Interval: d}).Members
		}
		if n := members("a", c.t0); n != 1 {
			c.Errorf("first member: %d counted, want 1", n)
		}
		if n := members("b", c.t0); n != 2 {
			c.Errorf("second member: %d counted, want 2", n)
		}
		if n := members("a", c.t0.Add(window/2)); n != 2 {
			c.Errorf("a again within the window: %d counted, want 2", n)
		}
		if n := members("a", c.t0.Add(window+window/2+d)); n != 1 {
			c.Errorf("a alone, b's window over: %d counted, want 1", n)
		}
	}},
	{"a member whose slot lies ahead counts until the window after that slot", func(c *fleetCase) {
		window := robots.MemberWindowFor(d)
		// a's slot is a window ahead of its Now (it queued behind a
		// NotBefore): it counts until a window after the slot, not
		// after the Now it asked at.
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: c.t0.Add(window), Interval: d}), c.t0.Add(window), true)
		later := c.t0.Add(window + window/2)
		if n := c.reserve(robots.SlotRequest{Member: "b", Now: later, Interval: d}).Members; n != 2 {
			c.Errorf("b half a window after a's slot: %d counted, want 2 (a's window runs from its slot)", n)
		}
	}},
	{"a slow origin's members stay counted between their own slots, and drop out after its window", func(c *fleetCase) {
		// A Crawl-delay of 30 s: three members take turns 35 s apart, so
		// that each one's own slots are 105 s apart and another's last
		// one 70 s old, past a minute but within MemberWindowFor(30 s).
		const slow = 30 * time.Second
		var last time.Time
		for k := range 9 {
			last = c.t0.Add(time.Duration(k) * 35 * time.Second)
			slot := c.reserve(robots.SlotRequest{Member: fmt.Sprint(k % 3), Now: last, Interval: slow})
			if w := min(k+1, 3); slot.Members != w {
				c.Errorf("reservation %d: %d members, want %d", k, slot.Members, w)
			}
		}
		after := last.Add(robots.MemberWindowFor(slow) + slow)
		if n := c.reserve(robots.SlotRequest{Member: "0", Now: after, Interval: slow}).Members; n != 1 {
			c.Errorf("a member back after the others' window: %d counted, want 1", n)
		}
	}},
	{"the epoch a store keeps stays while it keeps its slots", func(c *fleetCase) {
		first := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Epoch: "e1"})
		if first.Epoch == "" {
			return // a Pace that keeps no epoch: its slots are never lost
		}
		if first.Epoch != "e1" {
			c.Errorf("a fresh origin's epoch = %q, want the caller's e1", first.Epoch)
		}
		if got := c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Epoch: "e2"}); got.Epoch != "e1" {
			c.Errorf("epoch = %q after another member offered e2, want e1 kept", got.Epoch)
		}
		c.pause(c.t0.Add(time.Minute))
		c.cancel(c.t0.Add(d), d)
		if got := c.reserve(robots.SlotRequest{Member: "c", Now: c.t0, Interval: d, Epoch: "e3"}); got.Epoch != "e1" {
			c.Errorf("epoch = %q after a pause and a slot given back, want e1 kept", got.Epoch)
		}
	}},
	{"NextSlot writes no epoch: the first reservation's offered one is taken", func(c *fleetCase) {
		c.next(robots.SlotRequest{Now: c.t0, Interval: d})
		c.next(robots.SlotRequest{Now: c.t0, Interval: d, Epoch: "e0"})
		if got := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Epoch: "e1"}); got.Epoch != "" && got.Epoch != "e1" {
			c.Errorf("the first reservation after NextSlot got epoch %q, want its offered e1: a peek took an epoch", got.Epoch)
		}
	}},
	{"a store that comes back empty takes the offered epoch and grants no slot within an interval of Held", func(c *fleetCase) {
		before := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Epoch: "e1"})
		c.want(before, c.t0, true)
		// A second open is the store restarted empty, under the same
		// origin.
		empty := c.open(c.T)
		after := c.reserveOn(empty, robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Held: before.At, Epoch: "e2"})
		c.want(after, before.At.Add(d), true)
		if before.Epoch != "" && after.Epoch != "e2" {
			c.Errorf("the empty store's epoch = %q, want the offered e2 (e1 was the lost one's)", after.Epoch)
		}
		c.want(c.reserveOn(empty, robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Epoch: "e3"}), before.At.Add(2*d), true)
	}},
}
