package robots

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// line is one origin's waiting line in this process, in arrival order:
// only its head takes a slot, so a waiter that leaves holds nothing
// back. It also keeps the fleet's view of the origin as the store last
// gave it. It is safe for concurrent use.
type line struct {
	// n is len(waiters), read without the lock.
	n atomic.Int32

	// mu protects the fields below.
	mu      sync.Mutex
	waiters []*waiter
	// next is when the store last said the origin is free; last is the
	// latest store slot this process took; members is how many members
	// the store last counted (0: never said); epoch is its epoch last
	// seen.
	next, last time.Time
	members    int
	epoch      string
}

// waiter is one request in a line; wake, buffered, tells it the line
// moved.
type waiter struct{ wake chan struct{} }

func (l *line) len() int { return int(l.n.Load()) }

// join puts a new waiter at the end of the line.
func (l *line) join() *waiter {
	w := &waiter{wake: make(chan struct{}, 1)}
	l.mu.Lock()
	l.waiters = append(l.waiters, w)
	l.n.Store(int32(len(l.waiters)))
	l.mu.Unlock()
	return w
}

// leave takes w out of the line, waking the ones behind it.
func (l *line) leave(w *waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.waiters, w)
	if i < 0 {
		return
	}
	l.waiters = slices.Delete(l.waiters, i, i+1)
	l.n.Store(int32(len(l.waiters)))
	for _, b := range l.waiters[i:] {
		b.notify()
	}
}

// ahead returns how many waiters are ahead of w.
func (l *line) ahead(w *waiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(slices.Index(l.waiters, w), 0)
}

// wakeAll wakes every waiter: a pause moved their slots.
func (l *line) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.waiters {
		w.notify()
	}
}

func (w *waiter) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// heard keeps next, when the store said the origin is free.
func (l *line) heard(next time.Time) {
	l.mu.Lock()
	l.next = latest(l.next, next)
	l.mu.Unlock()
}

// storeNext returns when the store last said the origin is free.
func (l *line) storeNext() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// lastStore returns the end of the latest store slot this process took.
func (l *line) lastStore() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// tookStore records that this process took the store slot lasting
// until at.
func (l *line) tookStore(at time.Time) {
	l.mu.Lock()
	l.last = latest(l.last, at)
	l.mu.Unlock()
}

// confirm takes the store's answer as its word on the origin: its
// member count and its epoch, a change of which is logged: the store
// lost the origin's pace and has it again from the members' Held.
func (l *line) confirm(slot Slot, key OriginKey, logger *slog.Logger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot.Members > 0 {
		l.members = slot.Members
	}
	if l.epoch != "" && slot.Epoch != l.epoch {
		logger.Info("robots: store lost the origin's pace; its last slot is this process's last send", "origin", key)
	}
	l.epoch = slot.Epoch
}

// outageMembers is how many slots a request paced without the store
// takes: one for itself and one for each other member the store last
// counted pacing the origin, or when it never said, anyOrigin (the count
// it last gave for any origin); none of them can be told of it.
func (l *line) outageMembers(anyOrigin int) int {
	l.mu.Lock()
	n := l.members
	l.mu.Unlock()
	if n <= 0 {
		n = anyOrigin
	}
	return max(n, 1)
}

// aloneAfter is the earliest slot a request paced without the store may
// take, with n members pacing the origin at delay: n delays after the
// last slot this process took in the store, since the other members may
// have taken the slots in between; the zero time when it took none.
func (l *line) aloneAfter(n int, delay time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		return time.Time{}
	}
	return l.last.Add(time.Duration(n) * delay)
}

// latest returns the latest of times.
func latest(times ...time.Time) time.Time {
	var t time.Time
	for _, u := range times {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// slotTime rounds a slot to the microsecond: a Limiter's arithmetic is in
// floating point, a few nanoseconds off a whole interval, and a store
// keeps microseconds.
func slotTime(t time.Time) time.Time { return t.Round(time.Microsecond) }
