package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots"
)

// The transport benchmarks measure what robots.Transport adds to a request
// whose origin's robots.txt it already holds: a stub base round-tripper
// answers without I/O, so the difference between a request through the
// stub alone and one through the transport over it is the transport's own
// cost (README.md, "Transport overhead").

// benchAgent is the crawler's User-Agent; BenchBot has a group below.
const benchAgent = "BenchBot/1.0 (+https://example.com/bot)"

// benchRobots is a small robots.txt with a "*" group and one for BenchBot,
// without Crawl-delay, so that nothing paces the requests.
const benchRobots = `User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*?sessionid=

User-agent: BenchBot
Disallow: /admin/
Disallow: /search
Allow: /search/about
Disallow: /*.pdf$

Sitemap: https://example.com/sitemap.xml
`

// benchPath is the path and query every benchmark request asks for; the
// BenchBot group allows it.
const benchPath = "/catalog/page-17?color=blue"

// stubBase answers /robots.txt with benchRobots and every other request
// with 200 and an empty body, without I/O. Its only allocation per request
// is the *http.Response, which any real round-tripper makes too. It is
// safe for concurrent use.
type stubBase struct{}

// pageHeader is shared by every page response; nothing modifies it.
var pageHeader = http.Header{"Content-Type": {"text/html"}}

func (stubBase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/robots.txt" {
		return &http.Response{
			StatusCode:    http.StatusOK,
			Header:        http.Header{"Content-Type": {"text/plain"}},
			Body:          io.NopCloser(strings.NewReader(benchRobots)),
			ContentLength: int64(len(benchRobots)),
			Request:       req,
		}, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: pageHeader, Body: http.NoBody, Request: req}, nil
}

// benchTransport returns a transport over stubBase that holds the
// robots.txt of each of origins, and a check, to run after the benchmark,
// that it fetched each robots.txt once and never paced a request.
func benchTransport(b *testing.B, origins []string) (*robots.Transport, func()) {
	b.Helper()
	var sleeps atomic.Int64
	tr := robots.NewTransport(stubBase{}, robots.Options{
		UserAgent: benchAgent,
		MinDelay:  -1, // no pacing: the benchmark measures the decision path
		Sleep: func(context.Context, time.Duration) error {
			sleeps.Add(1)
			return nil
		},
	})
	for _, o := range origins {
		if err := tr.Check(context.Background(), o+benchPath); err != nil {
			b.Fatal(err)
		}
	}
	return tr, func() {
		b.Helper()
		st := tr.Stats()
		if st.Fetches[robots.Parsed] != int64(len(origins)) || st.Fetches[robots.Unreachable]+st.Fetches[robots.Unavailable] != 0 {
			b.Fatalf("robots.txt fetches %v, want %d parsed: the origins were not held", st.Fetches, len(origins))
		}
		if st.Refused != 0 || sleeps.Load() != 0 {
			b.Fatalf("%d refused and %d paced requests, want none", st.Refused, sleeps.Load())
		}
	}
}

// benchRequest returns a GET of origin+benchPath, carrying the crawler's
// User-Agent when withAgent is set; without it the transport adds its own.
func benchRequest(b *testing.B, origin string, withAgent bool) *http.Request {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, origin+benchPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	if withAgent {
		req.Header.Set("User-Agent", benchAgent)
	}
	return req
}

// roundTrip sends req on rt and closes the response, failing unless it is
// a 200. It may be called from RunParallel's goroutines.
func roundTrip(b *testing.B, rt http.RoundTripper, req *http.Request) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("status %d", resp.StatusCode)
	}
}

// BenchmarkTransportOverhead sends one request per operation to one
// origin: on the stub alone, and through the transport with the origin's
// robots.txt held, the request carrying its own User-Agent or not.
func BenchmarkTransportOverhead(b *testing.B) {
	const origin = "https://www.example.com"
	b.Run("stub", func(b *testing.B) {
		req := benchRequest(b, origin, true)
		for b.Loop() {
			roundTrip(b, stubBase{}, req)
		}
	})
	for _, tc := range []struct {
		name      string
		withAgent bool
	}{
		{"transport", true},
		{"transport-adds-agent", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tr, check := benchTransport(b, []string{origin})
			req := benchRequest(b, origin, tc.withAgent)
			for b.Loop() {
				roundTrip(b, tr, req)
			}
			b.StopTimer()
			check()
		})
	}
}

// parallelOrigins is how many origins BenchmarkTransportParallel spreads
// its requests over.
const parallelOrigins = 1000

// BenchmarkTransportParallel sends requests from GOMAXPROCS goroutines,
// each walking the 1,000 origins from its own starting point, so that at
// any moment they ask for different origins. Run with -cpu 1,2: if the
// goroutines were serialised on one lock, ns/op would not fall as
// processors are added.
func BenchmarkTransportParallel(b *testing.B) {
	origins := make([]string, parallelOrigins)
	for i := range origins {
		origins[i] = fmt.Sprintf("https://site%d.example", i)
	}
	reqs := make([]*http.Request, len(origins))
	for i, o := range origins {
		reqs[i] = benchRequest(b, o, true)
	}
	bench := func(b *testing.B, rt http.RoundTripper) {
		var worker atomic.Int64
		b.ResetTimer() // after benchTransport's 1,000 robots.txt fetches
		b.RunParallel(func(pb *testing.PB) {
			// Starting points 1/7 of the origins apart: far apart for
			// any GOMAXPROCS this machine can run.
			i := int(worker.Add(1)) * len(reqs) / 7
			for pb.Next() {
				roundTrip(b, rt, reqs[i%len(reqs)])
				i++
			}
		})
	}
	b.Run("stub", func(b *testing.B) { bench(b, stubBase{}) })
	b.Run("transport", func(b *testing.B) {
		tr, check := benchTransport(b, origins)
		bench(b, tr)
		b.StopTimer()
		check()
	})
}

// BenchmarkTransportCheck decides one URL per operation with Check, which
// a crawl frontier calls without sending anything.
func BenchmarkTransportCheck(b *testing.B) {
	const origin = "https://www.example.com"
	tr, check := benchTransport(b, []string{origin})
	ctx := context.Background()
	for b.Loop() {
		if err := tr.Check(ctx, origin+benchPath); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	check()
}
