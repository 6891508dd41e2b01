package fleettest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/crawlkit/robots"
)

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
	{"a NotBefore before Now is Now", func(c *fleetCase) {
		now := c.t0.Add(5 * d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: now, NotBefore: c.t0, Interval: d}), now, true)
		c.wantNext(robots.SlotRequest{Now: now.Add(d / 2), NotBefore: c.t0, Interval: d}, now.Add(d))
	}},
	{"slots reserved at once are each their own, an interval apart", func(c *fleetCase) {
		const n = 16
		var mu sync.Mutex
		var got []time.Time
		c.race(n, func(i int) (bool, error) {
			slot, err := c.f.ReserveSlot(c.ctx(), c.origin, robots.SlotRequest{Member: fmt.Sprint(i % 3), Now: c.t0, Interval: d})
			mu.Lock()
			defer mu.Unlock()
			got = append(got, slot.At)
			return slot.Reserved, err
		})
		slices.SortFunc(got, time.Time.Compare)
		for k, at := range got {
			if want := c.t0.Add(time.Duration(k) * d); !at.Equal(want) {
				c.Errorf("%d reservations at once: the %d-th slot is %v, want %v (a store that reads the last slot and then writes hands one out twice)", n, k, c.since(at), c.since(want))
				break
			}
		}
	}},
	{"each origin has a pace of its own", func(c *fleetCase) {
		c.pause(c.t0.Add(time.Hour))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Held: c.t0}), c.t0.Add(time.Hour), true)
		other := c.on(c.origin + ":8443")
		other.wantNext(robots.SlotRequest{Now: c.t0, Interval: d}, c.t0)
		slot := other.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d})
		other.want(slot, c.t0, true)
		if slot.Members > 1 {
			c.Errorf("the first member of another origin counts %d members, want 1: members are counted per origin", slot.Members)
		}
		other.want(other.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), c.t0.Add(d), true)
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
	{"a slot reserved with a spread is given back as it lasts", func(c *fleetCase) {
		// The transport gives a slot back as it lasts: at its time plus
		// the spread, reserved with the interval plus the spread.
		const spread = 100 * time.Millisecond
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Spread: spread}), c.t0.Add(d), true)
		c.cancel(c.t0.Add(d+spread), d+spread)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(d / 2), Interval: d}), c.t0.Add(d), true)
	}},
	{"a slot given back while another is reserved is given back or kept, whole", func(c *fleetCase) {
		// CancelSlot checks the last slot and writes it in one step: one
		// that checks and then writes can give back a slot reserved in
		// between, and the next comes within an interval of it.
		for k := range 20 {
			c := c.on(robots.OriginKey(fmt.Sprintf("%s:%d", c.origin, 8000+k)))
			c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
			c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
			var mu sync.Mutex
			var theirs time.Time
			c.race(2, func(i int) (bool, error) {
				if i == 0 {
					return true, c.f.CancelSlot(c.ctx(), c.origin, c.t0.Add(d), d)
				}
				slot, err := c.f.ReserveSlot(c.ctx(), c.origin, robots.SlotRequest{Member: "b", Now: c.t0, Interval: d})
				mu.Lock()
				theirs = slot.At
				mu.Unlock()
				return slot.Reserved, err
			})
			if !theirs.Equal(c.t0.Add(d)) && !theirs.Equal(c.t0.Add(2*d)) {
				c.Fatalf("a slot reserved as the one before it is given back: %v, want t0+1s (given back first) or t0+2s", c.since(theirs))
			}
			if next := c.reserve(robots.SlotRequest{Member: "c", Now: c.t0, Interval: d}); next.At.Before(theirs.Add(d)) {
				c.Fatalf("try %d: the slot after one reserved %v as another was given back is %v, within an interval of it", k, c.since(theirs), c.since(next.At))
			}
		}
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
		// The slots reserved at and past its end do not end it: a member
		// asking with no interval still learns of it.
		c.wantNext(robots.SlotRequest{Now: c.t0}, until)
	}},
	{"a pause holds a slot reserved without an interval", func(c *fleetCase) {
		until := c.t0.Add(time.Hour)
		c.pause(until)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0}), until, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Limit: c.t0}), until, false)
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
	{"of pauses asked at once, the latest holds", func(c *fleetCase) {
		// A store that reads the pause and then writes it lets a short
		// pause asked at the same time undo a long one.
		for k := range 10 {
			c := c.on(robots.OriginKey(fmt.Sprintf("%s:%d", c.origin, 9000+k)))
			long := c.t0.Add(time.Hour)
			c.race(16, func(i int) (bool, error) {
				until := c.t0.Add(time.Duration(i+1) * time.Second)
				if i == 7 {
					until = long
				}
				return true, c.f.Pause(c.ctx(), c.origin, until)
			})
			if got := c.next(robots.SlotRequest{Now: c.t0, Interval: d}); !got.Equal(long) {
				c.Fatalf("try %d: after 16 pauses at once, the longest to t0+1h, NextSlot = %v, want t0+1h", k, c.since(got))
			}
		}
	}},
	{"a pause outlives the refusals and slots asked during it", func(c *fleetCase) {
		// An origin's state is kept until its pause is past, however
		// short-lived what is written after it.
		until := c.t0.Add(time.Hour)
		c.pause(until)
		for _, at := range []time.Duration{0, time.Minute, 2 * time.Minute} {
			now := c.t0.Add(at)
			c.want(c.reserve(robots.SlotRequest{Member: "a", Now: now, Interval: d, Limit: now}), until, false)
		}
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0.Add(10 * time.Minute), Interval: d}), until, true)
		c.wantNext(robots.SlotRequest{Now: c.t0.Add(30 * time.Minute), Interval: d}, until.Add(d))
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
	{"NextSlot with a zero interval is the later of Now, NotBefore and the pause, whatever the last slot", func(c *fleetCase) {
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: c.t0.Add(10 * d), Interval: d}), c.t0.Add(10*d), true)
		c.wantNext(robots.SlotRequest{Now: c.t0}, c.t0)
		c.wantNext(robots.SlotRequest{Now: c.t0, Held: c.t0.Add(20 * d)}, c.t0)
		c.wantNext(robots.SlotRequest{Now: c.t0, NotBefore: c.t0.Add(2 * d)}, c.t0.Add(2*d))
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
	{"a Held past slots reserved in a row spaces the next from Held", func(c *fleetCase) {
		// After two slots an interval apart, as a store keeping a rate
		// between reservations has them, the send came late.
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0, true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(d), true)
		held := c.t0.Add(d + d/2)
		c.wantNext(robots.SlotRequest{Now: c.t0.Add(2 * d), Interval: d, Held: held}, held.Add(d))
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(2 * d), Interval: d, Held: held}), held.Add(d), true)
	}},
	{"a Held before the last slot lowers nothing", func(c *fleetCase) {
		for k := range 3 {
			c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(time.Duration(k)*d), true)
		}
		c.wantNext(robots.SlotRequest{Now: c.t0, Interval: d, Held: c.t0}, c.t0.Add(3*d))
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Held: c.t0}), c.t0.Add(3*d), true)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}), c.t0.Add(4*d), true)
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
		first, second := members("a", c.t0), members("b", c.t0)
		if first == 0 && second == 0 {
			return // a Pace that counts no members (Slot.Members)
		}
		// A count that leaves out the member asking is wrong too: alone,
		// it would pace as if it were not there.
		if first != 1 {
			c.Errorf("first member: %d counted, want 1, itself", first)
		}
		if second != 2 {
			c.Errorf("second member: %d counted, want 2", second)
		}
		if n := members("a", c.t0.Add(window/2)); n != 2 {
			c.Errorf("a again within the window: %d counted, want 2", n)
		}
		if n := members("a", c.t0.Add(window+window/2+d)); n != 1 {
			c.Errorf("a alone, b's window over: %d counted, want 1", n)
		}
	}},
	{"a member refused by its Limit is counted", func(c *fleetCase) {
		// It will ask again: while the store is down it paces alone at
		// the members' count times the delay, and must count itself.
		if c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}).Members == 0 {
			return
		}
		refused := c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Limit: c.t0})
		c.want(refused, c.t0.Add(d), false)
		if refused.Members != 2 {
			c.Errorf("b refused by its Limit: %d members counted, want 2, b included", refused.Members)
		}
		if n := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(d / 2), Interval: d}).Members; n != 2 {
			c.Errorf("a after b was refused: %d members counted, want 2", n)
		}
	}},
	{"a member whose slot lies ahead counts until the window after that slot", func(c *fleetCase) {
		window := robots.MemberWindowFor(d)
		// a's slot is a window ahead of its Now (it queued behind a
		// NotBefore): it counts until a window after the slot, not
		// after the Now it asked at.
		first := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: c.t0.Add(window), Interval: d})
		c.want(first, c.t0.Add(window), true)
		if first.Members == 0 {
			return
		}
		later := c.t0.Add(window + window/2)
		if n := c.reserve(robots.SlotRequest{Member: "b", Now: later, Interval: d}).Members; n != 2 {
			c.Errorf("b half a window after a's slot: %d counted, want 2 (a's window runs from its slot)", n)
		}
	}},
	{"a member counts for MemberWindowFor its interval after its slot, a minute at the least", func(c *fleetCase) {
		for i, interval := range []time.Duration{time.Millisecond, d, 10 * time.Second} {
			o := c.on(c.origin + robots.OriginKey(fmt.Sprintf(":%d", 8000+i)))
			window := robots.MemberWindowFor(interval)
			if o.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: interval}).Members == 0 {
				return
			}
			bAt := o.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: interval}).At
			last := bAt.Add(window)
			if n := o.reserve(robots.SlotRequest{Member: "a", Now: last, Interval: interval}).Members; n != 2 {
				c.Errorf("interval %v: a at the end of b's window (%v after b's slot): %d counted, want 2", interval, window, n)
			}
			if n := o.reserve(robots.SlotRequest{Member: "a", Now: last.Add(interval + time.Millisecond), Interval: interval}).Members; n != 1 {
				c.Errorf("interval %v: a past the end of b's window: %d counted, want 1", interval, n)
			}
		}
	}},
	{"a member's window runs from its latest slot", func(c *fleetCase) {
		window := robots.MemberWindowFor(d)
		if c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}).Members == 0 {
			return
		}
		c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(window / 2), Interval: d})
		if n := c.reserve(robots.SlotRequest{Member: "b", Now: c.t0.Add(window + window/4), Interval: d}).Members; n != 2 {
			c.Errorf("b past a's first window, within its second: %d counted, want 2 (a's window was not moved on)", n)
		}
	}},
	{"a member's count never shortens", func(c *fleetCase) {
		// a holds a slot ten minutes ahead, then is refused one now: it
		// still paces the origin until a window after its slot.
		ahead := c.t0.Add(10 * time.Minute)
		if c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, NotBefore: ahead, Interval: d}).Members == 0 {
			return
		}
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Limit: c.t0}), ahead.Add(d), false)
		if n := c.reserve(robots.SlotRequest{Member: "b", Now: c.t0.Add(5 * time.Minute), Interval: d}).Members; n != 2 {
			c.Errorf("b five minutes on, a's slot still ahead: %d counted, want 2 (a refusal shortened a's count)", n)
		}
	}},
	{"a member refused counts a window after its Now, not after the slot it was refused", func(c *fleetCase) {
		window := robots.MemberWindowFor(d)
		c.pause(c.t0.Add(time.Hour))
		if c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d}).Members == 0 {
			return
		}
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Limit: c.t0}), c.t0.Add(time.Hour+d), false)
		if n := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0.Add(window + d), Interval: d}).Members; n != 1 {
			c.Errorf("a a window after b was refused: %d counted, want 1 (b asked nothing since)", n)
		}
	}},
	{"a slot is never before Now, NotBefore or Held plus Interval, to the nanosecond", func(c *fleetCase) {
		// The transport's times carry nanoseconds; a store that keeps
		// microseconds rounds up, never down.
		for i, ns := range []time.Duration{1, 499, 501, 999} {
			o := c.on(c.origin + robots.OriginKey(fmt.Sprintf(":%d", 8000+i)))
			now := c.t0.Add(ns)
			if at := o.reserve(robots.SlotRequest{Member: "a", Now: now, Interval: d}).At; at.Before(now) {
				c.Errorf("slot %v is before its Now %v", c.since(at), c.since(now))
			}
			notBefore := c.t0.Add(5*d + ns)
			if at := o.reserve(robots.SlotRequest{Member: "a", Now: now, NotBefore: notBefore, Interval: d}).At; at.Before(notBefore) {
				c.Errorf("slot %v is before its NotBefore %v", c.since(at), c.since(notBefore))
			}
			held := c.t0.Add(10*d + ns)
			if at := o.next(robots.SlotRequest{Now: now, Interval: d, Held: held}); at.Before(held.Add(d)) {
				c.Errorf("NextSlot %v is before Held plus Interval %v", c.since(at), c.since(held.Add(d)))
			}
			if at := o.reserve(robots.SlotRequest{Member: "a", Now: now, Interval: d, Held: held}).At; at.Before(held.Add(d)) {
				c.Errorf("slot %v is before Held plus Interval %v", c.since(at), c.since(held.Add(d)))
			}
			if at := o.next(robots.SlotRequest{Now: now, Interval: d}); at.Before(held.Add(2 * d)) {
				c.Errorf("NextSlot %v is before the last slot plus Interval %v", c.since(at), c.since(held.Add(2*d)))
			}
		}
	}},
	{"Held is a send: the next slot is an interval after it, whatever the Spread", func(c *fleetCase) {
		const spread = 100 * time.Millisecond
		held := c.t0.Add(5 * d)
		c.want(c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Held: held, Spread: spread}), held.Add(d), true)
		c.want(c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d}), held.Add(2*d+spread), true)
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
			if k == 0 && slot.Members == 0 {
				return
			}
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
	{"a refused slot answers the epoch kept", func(c *fleetCase) {
		// The transport asks with Limit == Now, so many answers are
		// refusals: an epoch missing from them reads as a store that lost
		// the pace.
		first := c.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Epoch: "e1"})
		if first.Epoch == "" {
			return
		}
		refused := c.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Limit: c.t0, Epoch: "e2"})
		c.want(refused, c.t0.Add(d), false)
		if refused.Epoch != "e1" {
			c.Errorf("a refused slot's epoch = %q, want e1 kept", refused.Epoch)
		}
	}},
	{"a store whose first write was a pause or a slot given back takes the first reservation's epoch", func(c *fleetCase) {
		// A member tells a pause again as soon as the store answers after
		// losing it: that write must not leave the origin without an
		// epoch.
		paused := c.on(c.origin + ":8001")
		paused.pause(c.t0.Add(d))
		given := c.on(c.origin + ":8002")
		given.cancel(c.t0, d)
		for _, o := range []*fleetCase{paused, given} {
			// The first asks only for a slot free now: refused in the
			// pause, it takes the epoch all the same.
			first := o.reserve(robots.SlotRequest{Member: "a", Now: c.t0, Interval: d, Limit: c.t0, Epoch: "e1"})
			second := o.reserve(robots.SlotRequest{Member: "b", Now: c.t0, Interval: d, Epoch: "e2"})
			if first.Epoch == "" && second.Epoch == "" {
				continue // a Pace that keeps no epoch
			}
			if first.Epoch != "e1" || second.Epoch != "e1" {
				c.Errorf("%s: epochs %q then %q, want the first reservation's offered e1 taken, refused as it was, and kept", o.origin, first.Epoch, second.Epoch)
			}
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
