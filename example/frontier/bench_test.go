package main

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// BenchmarkCrawl runs the demo's crawl (100 origins, a politeness limit of
// 920 requests a second, pages of 20 ms, URLs grouped by origin) and
// reports the share of the limit it reached as %limit: through the
// frontier with 50 workers; with one origin answering 503 and Retry-After
// mid-crawl; with two transports sharing one redisstore; and through a
// plain worker pool of 50 for comparison. Each iteration is one crawl of a
// few seconds: run with -benchtime=1x and -count.
func BenchmarkCrawl(b *testing.B) {
	fleet := func(b *testing.B, p *plan) {
		srv := redistest.Start(b)
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		b.Cleanup(func() { rc.Close() })
		p.transports, p.store = 2, redisstore.New(rc, redisstore.Options{})
	}
	cases := []struct {
		name string
		set  func(*testing.B, *plan)
	}{
		{"frontier", func(*testing.B, *plan) {}},
		{"frontier-retry-after", func(_ *testing.B, p *plan) { p.pause = true }},
		{"frontier-two-transports", fleet},
		{"worker-pool", func(_ *testing.B, p *plan) { p.pool = true }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := demoPlan()
			c.set(b, &p)
			var share float64
			for b.Loop() {
				r, err := crawl(context.Background(), p)
				if err != nil {
					b.Fatal(err)
				}
				share += r.share()
			}
			b.ReportMetric(100*share/float64(b.N), "%limit")
		})
	}
}
