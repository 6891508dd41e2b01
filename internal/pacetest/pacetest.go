// Package pacetest is the conformance suite of robots.Pace, the contract
// of an origin's pace that a Transport's in-memory pace and a FleetStore
// both implement: arrival order and spacing, the earliest and the latest
// slot a request can use, giving a slot back, pauses, members, a member's
// last slot that a store restarted empty must not lose, and the epoch.
// Times are the callers' (SlotRequest.Now), so the suite runs on a
// timeline of its own and never sleeps.
package pacetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/robots"
)

// Run runs the suite against the Pace that newPace returns, a fresh one
// for each case (or one whose origins the cases do not share).
func Run(t *testing.T, newPace func(t *testing.T) robots.Pace) {
	const d = time.Second
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, p robots.Pace, origin robots.OriginKey, t0 time.Time)
	}{
		{"slots follow one another in arrival order, an interval apart", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			for k := range 4 {
				want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(time.Duration(k)*d), true)
			}
		}},
		{"no slot before NotBefore", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, NotBefore: t0.Add(5 * d), Interval: d}), t0.Add(5*d), true)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(6*d), true)
		}},
		{"a slot past the limit is not reserved", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0, true)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d, Limit: t0.Add(d / 2)}), t0.Add(d), false)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(d), true)
		}},
		{"the last slot given back is reserved again", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0, true)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(d), true)
			if err := p.CancelSlot(context.Background(), o, t0.Add(d), d); err != nil {
				t.Fatal(err)
			}
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(d), true)
		}},
		{"a pause holds every later slot, and NextSlot tells it", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			until := t0.Add(time.Hour)
			if err := p.Pause(context.Background(), o, until); err != nil {
				t.Fatal(err)
			}
			if got := next(t, p, o, robots.SlotRequest{Now: t0}); !got.Equal(until) {
				t.Errorf("NextSlot with no interval during a pause = %v, want its end %v", got, until)
			}
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), until, true)
			if err := p.Pause(context.Background(), o, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), until.Add(d), true)
		}},
		{"NextSlot reserves nothing", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0, true)
			req := robots.SlotRequest{Now: t0, Interval: d}
			for range 2 {
				if got := next(t, p, o, req); !got.Equal(t0.Add(d)) {
					t.Errorf("NextSlot = %v, want %v", got, t0.Add(d))
				}
			}
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d}), t0.Add(d), true)
		}},
		{"no slot within an interval of the member's last sent", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			held := t0.Add(10 * d)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d, Held: held}), held.Add(d), true)
			want(t, reserve(t, p, o, robots.SlotRequest{Member: "b", Now: t0, Interval: d}), held.Add(2*d), true)
		}},
		{"members are counted within their window, and drop out after it", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			window := robots.MemberWindowFor(d)
			members := func(m string, now time.Time) int {
				return reserve(t, p, o, robots.SlotRequest{Member: m, Now: now, Interval: d}).Members
			}
			if n := members("a", t0); n != 1 {
				t.Errorf("first member: %d counted, want 1", n)
			}
			if n := members("b", t0); n != 2 {
				t.Errorf("second member: %d counted, want 2", n)
			}
			if n := members("a", t0.Add(window/2)); n != 2 {
				t.Errorf("a again within the window: %d counted, want 2", n)
			}
			if n := members("a", t0.Add(window+window/2+d)); n != 1 {
				t.Errorf("a alone, b's window over: %d counted, want 1", n)
			}
		}},
		{"a slow origin's members stay counted between their own slots", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			const slow = 30 * time.Second
			for k := range 9 {
				slot := reserve(t, p, o, robots.SlotRequest{Member: fmt.Sprint(k % 3), Now: t0.Add(time.Duration(k) * 35 * time.Second), Interval: slow})
				if w := min(k+1, 3); slot.Members != w {
					t.Errorf("reservation %d: %d members, want %d", k, slot.Members, w)
				}
			}
		}},
		{"the epoch a store keeps stays while it keeps its slots", func(t *testing.T, p robots.Pace, o robots.OriginKey, t0 time.Time) {
			first := reserve(t, p, o, robots.SlotRequest{Member: "a", Now: t0, Interval: d, Epoch: "e1"})
			if first.Epoch == "" {
				return // a Pace that keeps no epoch: its slots are never lost
			}
			if first.Epoch != "e1" {
				t.Errorf("a fresh origin's epoch = %q, want the caller's e1", first.Epoch)
			}
			if got := reserve(t, p, o, robots.SlotRequest{Member: "b", Now: t0, Interval: d, Epoch: "e2"}); got.Epoch != "e1" {
				t.Errorf("epoch = %q after another member offered e2, want e1 kept", got.Epoch)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPace(t)
			origin := robots.OriginKey(fmt.Sprintf("https://pacetest-%d.example", time.Now().UnixNano()))
			tc.run(t, p, origin, time.Now().Truncate(time.Microsecond))
		})
	}
}

func reserve(t *testing.T, p robots.Pace, o robots.OriginKey, req robots.SlotRequest) robots.Slot {
	t.Helper()
	slot, err := p.ReserveSlot(context.Background(), o, req)
	if err != nil {
		t.Fatalf("ReserveSlot(%+v): %v", req, err)
	}
	return slot
}

func next(t *testing.T, p robots.Pace, o robots.OriginKey, req robots.SlotRequest) time.Time {
	t.Helper()
	at, err := p.NextSlot(context.Background(), o, req)
	if err != nil {
		t.Fatalf("NextSlot(%+v): %v", req, err)
	}
	return at
}

func want(t *testing.T, slot robots.Slot, at time.Time, reserved bool) {
	t.Helper()
	if !slot.At.Equal(at) || slot.Reserved != reserved {
		t.Errorf("slot %v (reserved %v), want %v (reserved %v)", slot.At, slot.Reserved, at, reserved)
	}
}
