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
// reports the share of the limit it reached as %limit: through package
// frontier with 50 workers, URLs grouped by origin and shuffled; with one
// origin answering 503 and Retry-After mid-crawl; with one whose
// robots.txt answers 503 first; with one transport on a redisstore; with
// two transports sharing one
// redisstore, every origin's URLs split between them and the origins
// split between them; and through a plain worker pool of 50 for comparison,
// grouped and shuffled. Each iteration is one crawl of a
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
		{"frontier-shuffled", func(_ *testing.B, p *plan) { p.shuffled = true }},
		{"frontier-retry-after", func(_ *testing.B, p *plan) { p.pause = true }},
		{"frontier-robots-503", func(_ *testing.B, p *plan) { p.robotsDown = true }},
		{"frontier-one-transport-redis", func(b *testing.B, p *plan) { fleet(b, p); p.transports = 1 }},
		{"frontier-two-transports", fleet},
		{"frontier-two-transports-by-origin", func(b *testing.B, p *plan) { fleet(b, p); p.byOrigin = true }},
		{"worker-pool", func(_ *testing.B, p *plan) { p.pool = true }},
		{"worker-pool-shuffled", func(_ *testing.B, p *plan) { p.pool, p.shuffled = true, true }},
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
