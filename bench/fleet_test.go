package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// The fleet benchmarks measure what the Redis store (package redisstore)
// costs a request against the in-memory store, on a redis-server on
// loopback that they start themselves (README.md, "Fleet store").

// fleetMember returns a transport over stubBase whose Fleet is a new
// redisstore.Store on addr (empty addr: none, the in-memory store), on
// clock, paced by minDelay (negative: unpaced).
func fleetMember(b *testing.B, addr string, clock *fakeclock.Clock, minDelay time.Duration) *robots.Transport {
	b.Helper()
	var fleet robots.Fleet
	if addr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		b.Cleanup(func() { rdb.Close() })
		fleet = redisstore.New(rdb, redisstore.Options{})
	}
	return robots.NewTransport(stubBase{}, robots.Options{
		UserAgent: benchAgent,
		MinDelay:  minDelay,
		Fleet:     fleet,
		Now:       clock.Now,
		Sleep:     clock.Sleep,
	})
}

// BenchmarkRedisPing is one loopback round trip to redis-server: the unit
// the Redis store's cost is counted in.
func BenchmarkRedisPing(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	for b.Loop() {
		if err := rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFleetRequest sends one request per operation to one origin whose
// robots.txt the transport holds, with the in-memory store and with the
// Redis store, unpaced and paced (a fake clock makes each wait free, so
// what is left is the cost of reserving the slot).
func BenchmarkFleetRequest(b *testing.B) {
	const origin = "https://www.example.com"
	srv := redistest.Start(b)
	for _, store := range []string{"memory", "redis"} {
		for _, pace := range []struct {
			name  string
			delay time.Duration
		}{{"unpaced", -1}, {"paced", time.Second}} {
			b.Run(fmt.Sprintf("store=%s/%s", store, pace.name), func(b *testing.B) {
				addr := ""
				if store == "redis" {
					addr = srv.Addr
				}
				tr := fleetMember(b, addr, fakeclock.New(), pace.delay)
				req := benchRequest(b, origin, true)
				roundTrip(b, tr, req)
				for b.Loop() {
					roundTrip(b, tr, req)
				}
			})
		}
	}
}

// BenchmarkFleetThroughput has 1, 2 and 4 transports, each with its own
// Redis client and Store as separate processes would, send paced requests
// to 1,000 origins from 16 goroutines per core, so that many requests wait
// on Redis at once; req/s is the fleet's rate.
func BenchmarkFleetThroughput(b *testing.B) {
	srv := redistest.Start(b)
	origins := make([]string, 1000)
	for i := range origins {
		origins[i] = fmt.Sprintf("https://site-%d.example", i)
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("transports=%d", n), func(b *testing.B) {
			clock := fakeclock.New()
			members := make([]*robots.Transport, n)
			for i := range members {
				members[i] = fleetMember(b, srv.Addr, clock, time.Second)
				for _, o := range origins {
					roundTrip(b, members[i], benchRequest(b, o, true))
				}
			}
			var next atomic.Int64
			b.SetParallelism(16)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					roundTrip(b, members[i%int64(n)], benchRequest(b, origins[i%int64(len(origins))], true))
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// BenchmarkStoreReserveSlot is the store call a paced request makes to
// share its origin's pace with the fleet: one script, one round trip.
func BenchmarkStoreReserveSlot(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { rdb.Close() })
	store := redisstore.New(rdb, redisstore.Options{})
	ctx := context.Background()
	now := time.Now()
	for b.Loop() {
		// Each slot one interval after the last, as a crawl at full pace.
		req := robots.SlotRequest{Member: "bench", Now: now, Interval: time.Microsecond}
		if slot, err := store.ReserveSlot(ctx, "https://www.example.com:443", req); err != nil || !slot.Reserved {
			b.Fatal(slot, err)
		}
	}
}
