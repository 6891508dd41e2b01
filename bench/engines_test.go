package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/pgtest"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/pgstore"
	"github.com/crawlkit/robots/redisstore"
)

// The engine benchmarks put the fleet stores side by side (README.md,
// "Fleet engines"): on Redis, Valkey and PostgreSQL, each started on
// loopback by the benchmark, the engine's own round trip from the same
// client (PING, SELECT 1), the store call of an unpaced fleet request
// (NextSlot with no interval: the pause any member stored) and of a paced
// one (ReserveSlot), each reporting the server's CPU per operation read
// from /proc (the server's process and its children, which serve
// PostgreSQL's connections).

// engine is one store under test: its round trip and its Fleet.
type engine struct {
	name  string
	pid   func() int
	ping  func(context.Context) error
	fleet robots.Fleet
}

func startEngines(b *testing.B) []engine {
	b.Helper()
	var out []engine
	for _, bin := range []string{"redis-server", "valkey-server"} {
		srv, err := redistest.LaunchEngine(bin)
		if err != nil {
			b.Logf("%s skipped: %v", bin, err)
			continue
		}
		b.Cleanup(srv.Stop)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		b.Cleanup(func() { rdb.Close() })
		out = append(out, engine{
			name:  strings.TrimSuffix(bin, "-server"),
			pid:   srv.PID,
			ping:  func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
			fleet: redisstore.New(rdb, redisstore.Options{}),
		})
	}
	if pgtest.Installed() == nil {
		srv := pgtest.Start(b)
		pool, err := pgxpool.New(context.Background(), srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		store := pgstore.New(pool, pgstore.Options{})
		if err := store.Migrate(context.Background()); err != nil {
			b.Fatal(err)
		}
		out = append(out, engine{
			name: "postgres",
			pid:  srv.PID,
			ping: func(ctx context.Context) error {
				var one int
				return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
			},
			fleet: store,
		})
	}
	return out
}

// BenchmarkEngines runs each operation on each engine, one after the
// other in one run, so that they share the machine's load of the moment.
func BenchmarkEngines(b *testing.B) {
	engines := startEngines(b)
	if len(engines) == 0 {
		b.Skip("no engine installed (redis-server, valkey-server, postgresql)")
	}
	ctx := context.Background()
	for _, e := range engines {
		ops := []struct {
			name string
			op   func(i int) error
		}{
			{"roundtrip", func(int) error { return e.ping(ctx) }},
			{"unpaced", func(int) error {
				_, err := e.fleet.NextSlot(ctx, "https://www.example.com", robots.SlotRequest{Now: time.Now()})
				return err
			}},
			{"paced", func(i int) error {
				// A full crawl of many origins: each reservation on one
				// of 1,000, free now.
				origin := robots.OriginKey(fmt.Sprintf("https://site-%d.example", i%1000))
				now := time.Now()
				_, err := e.fleet.ReserveSlot(ctx, origin, robots.SlotRequest{Member: "bench", Now: now, Interval: time.Microsecond, Limit: now})
				return err
			}},
		}
		for _, o := range ops {
			b.Run(e.name+"/"+o.name, func(b *testing.B) {
				if err := o.op(0); err != nil {
					b.Fatal(err)
				}
				before := cpuOf(e.pid())
				i := 0
				for b.Loop() {
					if err := o.op(i); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64((cpuOf(e.pid())-before).Microseconds())/float64(i), "server-µs/op")
			})
		}
	}
}

// cpuOf returns the CPU time, user and system, of process pid and of its
// live children, from /proc: a server's cost, wherever its work runs.
func cpuOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	const hz = 100 // USER_HZ on Linux
	total := int64(0)
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The command may hold spaces: the fields after it follow its ")".
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		if len(f) < 13 {
			continue
		}
		self, _ := strconv.Atoi(strings.Fields(string(data))[0])
		ppid, _ := strconv.Atoi(f[1])
		if self != pid && ppid != pid {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += utime + stime
	}
	return time.Duration(total) * time.Second / hz
}
