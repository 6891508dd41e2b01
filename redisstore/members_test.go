package redisstore_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// TestReserveSlotCountsMembersOnSlowOrigin: on an origin with a 30 s
// interval, 3 members take turns 35 s apart, each reserving when it
// comes, so that a member's own slots are 105 s apart and another's last
// one 70 s old, past the one-minute MemberWindow. Every reservation still
// counts all 3.
func TestReserveSlotCountsMembersOnSlowOrigin(t *testing.T) {
	_, _, s := newStore(t, redisstore.Options{})
	const interval = 30 * time.Second
	t0 := time.Now().Truncate(time.Microsecond)
	for k := range 12 {
		member := fmt.Sprintf("m%d", k%3)
		now := t0.Add(time.Duration(k) * 35 * time.Second)
		slot, err := s.ReserveSlot(context.Background(), origin, robots.SlotRequest{Member: member, Now: now, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(k+1, 3); slot.Members != want {
			t.Errorf("reservation %d by %s, 105 s after its own last: %d members; want %d", k, member, slot.Members, want)
		}
	}
}

// switchStore is a Store whose slot calls fail while down is set, as
// Redis unavailable would make them.
type switchStore struct {
	*redisstore.Store
	down *atomic.Bool
}

func (s switchStore) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	if s.down.Load() {
		return robots.Slot{}, fmt.Errorf("%w: switched off", redisstore.ErrUnavailable)
	}
	return s.Store.ReserveSlot(ctx, origin, req)
}

// slowSite is the base of TestFleetSlowOriginOutage's members: robots.txt
// asks for a 30 s Crawl-delay, and each page request is recorded, with
// its member, on the shared clock.
type slowSite struct {
	clock *fakeclock.Clock
	mu    sync.Mutex
	sends map[int][]time.Time
}

func (s *slowSite) base(member int) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body := "User-agent: *\nCrawl-delay: 30\n"
		if r.URL.Path != "/robots.txt" {
			s.mu.Lock()
			s.sends[member] = append(s.sends[member], s.clock.Now())
			s.mu.Unlock()
			body = "page"
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
}

// TestFleetSlowOriginOutage: 3 members crawl an origin whose robots.txt
// asks for a 30 s Crawl-delay, taking turns 35 s apart on one fake clock,
// so that each member's own requests are 105 s apart. Then the store
// becomes unavailable: each member paces alone at the delay times the 3
// members it still counts, 90 s after its own last request, so that the
// fleet keeps the origin's pace.
func TestFleetSlowOriginOutage(t *testing.T) {
	srv := redistest.Start(t)
	const (
		delay   = 30 * time.Second
		members = 3
	)
	site := &slowSite{clock: fakeclock.New(), sends: map[int][]time.Time{}}
	var down atomic.Bool
	fleet := make([]http.RoundTripper, members)
	for i := range fleet {
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { rc.Close() })
		store := redisstore.New(rc, redisstore.Options{Timeout: healthyTimeout})
		fleet[i] = robots.NewTransport(site.base(i), robots.Options{
			UserAgent:     "ExampleBot",
			MaxCrawlDelay: time.Minute,
			Fleet:         switchStore{Store: store, down: &down},
			Now:           site.clock.Now,
			Sleep:         site.clock.Sleep,
		})
	}
	send := func(i, k int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitCeiling)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://slow.example/m%d/%d", i, k), nil)
		resp, err := fleet[i].RoundTrip(req)
		if err != nil {
			t.Fatalf("member %d, request %d: %v", i, k, err)
		}
		resp.Body.Close()
	}
	for k := range 4 {
		for i := range members {
			site.clock.Advance(35 * time.Second)
			send(i, k)
		}
	}
	down.Store(true)
	for i := range members {
		send(i, 4)
	}
	for i := range members {
		sends := site.sends[i]
		for k := 1; k < len(sends); k++ {
			if gap := sends[k].Sub(sends[k-1]); gap < members*delay {
				t.Errorf("member %d: request %d %v after its previous; want at least %d members x %v", i, k, gap, members, delay)
			}
		}
	}
}

// TestFleetConformance runs the Fleet contract's suite against Stores
// on one real redis-server, each case's under a Prefix of its own.
func TestFleetConformance(t *testing.T) {
	srv := redistest.Start(t)
	n := 0
	fleettest.Run(t, func(t *testing.T) robots.Fleet {
		n++
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { rc.Close() })
		return redisstore.New(rc, redisstore.Options{Prefix: fmt.Sprintf("fleettest%d:", n)})
	})
}
