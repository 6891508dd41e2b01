package bench

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawlkit/robots"
)

// BenchmarkHeldOrigin sends one request per operation to an origin whose
// robots.txt the transport holds, among 10, 10,000 and 100,000 origins
// held: what the transport adds to a request should not grow with the
// origins it holds (README.md, "Transport overhead").
func BenchmarkHeldOrigin(b *testing.B) {
	for _, n := range []int{10, 10000, 100000} {
		b.Run(fmt.Sprintf("origins=%d", n), func(b *testing.B) {
			origins := make([]string, n)
			for i := range origins {
				origins[i] = fmt.Sprintf("https://site%d.example", i)
			}
			tr := robots.NewTransport(stubBase{}, robots.Options{UserAgent: benchAgent, MinDelay: -1, MaxOrigins: n})
			for _, o := range origins {
				if err := tr.Check(context.Background(), o+benchPath); err != nil {
					b.Fatal(err)
				}
			}
			if held := tr.Stats().Origins; held != n {
				b.Fatalf("%d origins held, want %d", held, n)
			}
			req := benchRequest(b, origins[n/2], true)
			for b.Loop() {
				roundTrip(b, tr, req)
			}
		})
	}
}

// newOrigins is how many origins BenchmarkNewOrigin's crawl meets.
const newOrigins = 1000000

// BenchmarkNewOrigin is a broad crawl that meets 1,000,000 origins, one
// request each, through a transport with the default MaxOrigins; every
// origin's delay is still running when the table makes room for the next
// (the clock stands still), the dearest case for the pacer. It reports
// the time per new origin over the first and the last 100,000: flat cost
// makes them equal. Each operation is the whole crawl: run it with
// -benchtime=1x.
func BenchmarkNewOrigin(b *testing.B) {
	origins := make([]string, newOrigins)
	for i := range origins {
		origins[i] = fmt.Sprintf("https://site%d.example%s", i, benchPath)
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const tenth = newOrigins / 10
	for b.Loop() {
		tr := robots.NewTransport(stubBase{}, robots.Options{
			UserAgent: benchAgent,
			MinDelay:  time.Second,
			Now:       func() time.Time { return epoch },
			Sleep:     func(context.Context, time.Duration) error { return nil },
		})
		var first, last time.Duration
		start := time.Now()
		for i, o := range origins {
			req, err := http.NewRequest(http.MethodGet, o, nil)
			if err != nil {
				b.Fatal(err)
			}
			roundTrip(b, tr, req)
			switch i + 1 {
			case tenth:
				first = time.Since(start)
			case newOrigins - tenth:
				start = time.Now()
			case newOrigins:
				last = time.Since(start)
			}
		}
		b.ReportMetric(float64(first.Nanoseconds())/tenth, "first-100k-ns/origin")
		b.ReportMetric(float64(last.Nanoseconds())/tenth, "last-100k-ns/origin")
	}
}
