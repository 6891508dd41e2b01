package main

import (
	"container/heap"
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/robots"
)

// Frontier holds a crawl's URLs by origin and hands a worker a URL only
// when its origin is free: no worker of this process holds another URL of
// it, and the transport says a request to it could be sent now. A worker
// therefore never sleeps inside RoundTrip for a slot this process could
// have seen coming; it works on another origin instead.
//
// When an origin is next free comes from robots.Transport.NextFree, which
// sees what a copy of each origin's Crawl-delay cannot: a Retry-After
// pause, the slots other fleet members took, the retry time of an
// unreachable robots.txt. A request that still meets a taken slot (another
// member took it a moment before) fails fast with a *robots.SlotError,
// whose At field tells when to offer the URL again; nothing is requeued
// blindly. It is safe for concurrent use.
type Frontier struct {
	tr *robots.Transport

	// Requeued counts the URLs offered again after a fast failure or a
	// Retry-After answer: a frontier that spins shows here.
	Requeued atomic.Int64

	// mu protects the fields below.
	mu      sync.Mutex
	origins map[string]*queue
	ready   readyHeap
	held    int // URLs added and not yet done
	// changed is closed, and replaced, whenever the ready heap's head may
	// have become earlier, to wake the workers waiting for it.
	changed chan struct{}
}

// queue is one origin's URLs.
type queue struct {
	origin string
	urls   []string
	// free is when the origin is next free, as the transport last said.
	free time.Time
	// out reports whether a worker holds one of its URLs.
	out bool
	// index is the queue's place in the ready heap, -1 when not there.
	index int
}

// New returns an empty Frontier that schedules by tr.
func New(tr *robots.Transport) *Frontier {
	return &Frontier{tr: tr, origins: make(map[string]*queue), changed: make(chan struct{})}
}

// Add queues rawURL behind the other URLs of its origin. It fails for a URL
// that is not an absolute http or https URL.
func (f *Frontier) Add(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	origin, err := f.tr.Origin(u)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.origins[origin]
	if q == nil {
		q = &queue{origin: origin, index: -1}
		f.origins[origin] = q
	}
	q.urls = append(q.urls, rawURL)
	f.held++
	if !q.out && q.index < 0 {
		heap.Push(&f.ready, q)
		f.wake()
	}
	return nil
}

// ErrEmpty is what Next returns when every URL added has been done.
var ErrEmpty = errors.New("frontier: no URL left")

// Lease is a URL handed to a worker. Give it back with Done.
type Lease struct {
	URL string
	q   *queue
}

// Next waits until some origin with URLs is free and returns its oldest
// URL, holding that origin until Done. It returns ErrEmpty when no URL is
// left, or ctx's error.
func (f *Frontier) Next(ctx context.Context) (Lease, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.mu.Lock()
		if f.held == 0 {
			f.mu.Unlock()
			return Lease{}, ErrEmpty
		}
		changed := f.changed
		var wait <-chan time.Time
		if len(f.ready) > 0 {
			q := f.ready[0]
			d := time.Until(q.free)
			if d <= 0 {
				heap.Pop(&f.ready)
				l := Lease{URL: q.urls[0], q: q}
				q.urls, q.out = q.urls[1:], true
				f.mu.Unlock()
				return l, nil
			}
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
			return Lease{}, ctx.Err()
		case <-changed:
		case <-wait:
		}
	}
}

// Done gives l back with the outcome of its request. A request refused
// for a slot another member took, an unreachable robots.txt or answered
// 429 or 503 is offered again when its origin is free; any other outcome
// is final. The origin is then free to be handed out again, from the time
// the transport gives.
func (f *Frontier) Done(ctx context.Context, l Lease, resp *http.Response, err error) {
	q := l.q
	var slot *robots.SlotError
	var refused *robots.DisallowedError
	again, at := false, time.Time{}
	switch {
	case errors.As(err, &slot):
		again, at = true, slot.At
	case errors.As(err, &refused) && refused.Unreachable:
		again, at = true, refused.RetryAt
	case err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable):
		// The transport now holds the origin's pause: NextFree tells its end.
		again = true
	}
	f.mu.Lock()
	if again {
		f.Requeued.Add(1)
		q.urls = append([]string{l.URL}, q.urls...)
	} else {
		f.held--
	}
	next := ""
	if len(q.urls) > 0 {
		next = q.urls[0]
	}
	f.mu.Unlock()

	// Asked outside the lock: with a fleet store it is a round trip.
	if next != "" {
		if free, ferr := f.tr.NextFree(ctx, next); ferr == nil && free.After(at) {
			at = free
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	q.out = false
	if len(q.urls) > 0 {
		q.free = at
		heap.Push(&f.ready, q)
	}
	f.wake()
}

// wake tells the waiting workers that the ready heap changed; f.mu is
// held.
func (f *Frontier) wake() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// readyHeap orders the origins that have URLs and no worker by when they
// are next free.
type readyHeap []*queue

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].free.Before(h[j].free) }
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *readyHeap) Push(x any) {
	q := x.(*queue)
	q.index = len(*h)
	*h = append(*h, q)
}

func (h *readyHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	q.index = -1
	*h = old[:len(old)-1]
	return q
}
