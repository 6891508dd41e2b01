// Retry crawls two local sites with github.com/hashicorp/go-retryablehttp
// over the robots transport, and shows the retry policy such a client
// needs. A client that retries on errors retries a refusal like any other
// error, with backoff, though no retry can change it: a rule refused the
// URL, or the site's robots.txt is unreachable and the transport refuses
// the origin's URLs without fetching anything until DisallowedError's
// RetryAt. So the policy stops on robots.ErrDisallowed, the crawler drops
// a URL a rule refused and requeues one refused for an unreachable
// robots.txt at RetryAt, and retries of real failures (a page answering
// 503) go on as before.
//
// Its own module, so that go-retryablehttp is no dependency of the
// library. Run it with go run . (no network needed).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/hashicorp/go-retryablehttp"
)

const userAgent = "RetryBot/1.0 (+https://example.com/bot)"

// checkRetry is the client's retry policy: go-retryablehttp's default,
// except that a robots.txt refusal is never retried. The error is passed
// on, so that the caller sees the DisallowedError through errors.As.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if errors.Is(err, robots.ErrDisallowed) {
		return false, err
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// newClient returns the retrying client over tr.
func newClient(tr *robots.Transport) *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	c.CheckRetry = checkRetry
	c.RetryMax = 3
	// Short waits keep the demo quick; a crawler keeps the defaults.
	c.RetryWaitMin, c.RetryWaitMax = 10*time.Millisecond, 50*time.Millisecond
	c.Logger = nil
	return c
}

// clock is the time the crawl runs on: real in the demo, a fake one in
// its tests, so that waiting for RetryAt costs no time.
type clock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// item is a URL of the frontier, not to be tried before due.
type item struct {
	url   string
	due   time.Time
	tries int
}

// maxTries is how often a URL refused for an unreachable robots.txt is
// requeued before the crawler gives up on it.
const maxTries = 3

// outcome is what became of one URL.
type outcome struct {
	URL    string
	Status int    // the page's status, 0 when it was not fetched
	Result string // "fetched", "dropped", "requeued", "failed"
	Why    string
	At     time.Time // when it was tried
	Next   time.Time // when requeued: the RetryAt it was requeued for
}

// crawl fetches urls through client, the earliest due first: a URL a rule
// refuses is dropped, one refused for an unreachable robots.txt is
// requeued at its RetryAt, up to maxTries tries.
func crawl(ctx context.Context, client *retryablehttp.Client, clk clock, urls []string) ([]outcome, error) {
	var queue []item
	for _, u := range urls {
		queue = append(queue, item{url: u, due: clk.now()})
	}
	var out []outcome
	for len(queue) > 0 {
		slices.SortStableFunc(queue, func(a, b item) int { return a.due.Compare(b.due) })
		it := queue[0]
		queue = queue[1:]
		if wait := it.due.Sub(clk.now()); wait > 0 {
			if err := clk.sleep(ctx, wait); err != nil {
				return out, err
			}
		}
		it.tries++
		o := outcome{URL: it.url, At: clk.now()}
		req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, it.url, nil)
		if err != nil {
			return out, err
		}
		resp, err := client.Do(req)
		var refused *robots.DisallowedError
		switch {
		case errors.As(err, &refused) && refused.Unreachable && it.tries < maxTries:
			o.Result, o.Why, o.Next = "requeued", "robots.txt unreachable", refused.RetryAt
			queue = append(queue, item{url: it.url, due: refused.RetryAt, tries: it.tries})
		case errors.As(err, &refused) && refused.Unreachable:
			o.Result, o.Why = "failed", fmt.Sprintf("robots.txt still unreachable after %d tries", it.tries)
		case errors.As(err, &refused):
			o.Result, o.Why = "dropped", "refused by "+refused.Rule.String()
		case err != nil:
			o.Result, o.Why = "failed", err.Error()
		default:
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			o.Result, o.Status = "fetched", resp.StatusCode
		}
		out = append(out, o)
	}
	return out, nil
}

// sites are the two demo sites: one whose robots.txt refuses /private and
// whose /flaky page fails once, one whose robots.txt answers 503 at first.
type sites struct {
	// mu protects the counts.
	mu     sync.Mutex
	robots map[string]int // robots.txt requests per site
	pages  map[string]int // page requests per site and path
}

func (s *sites) count(m map[string]int, key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[key]++
	return m[key]
}

// shop serves the site with rules: /private refused, /flaky a 503 once.
func (s *sites) shop() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.count(s.robots, "shop")
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		if n := s.count(s.pages, "shop"+r.URL.Path); r.URL.Path == "/flaky" && n == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "<p>page</p>")
	})
}

// news serves the site whose robots.txt is unreachable (503) at first.
func (s *sites) news() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if s.count(s.robots, "news") == 1 {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		s.count(s.pages, "news"+r.URL.Path)
		io.WriteString(w, "<p>news</p>")
	})
}

// serve serves h on a loopback port until stop is called.
func serve(h http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// run serves the two sites, crawls them and prints what became of each
// URL.
func run(ctx context.Context, w io.Writer, clk clock) (*sites, []outcome, error) {
	s := &sites{robots: map[string]int{}, pages: map[string]int{}}
	shop, stopShop, err := serve(s.shop())
	if err != nil {
		return nil, nil, err
	}
	defer stopShop()
	news, stopNews, err := serve(s.news())
	if err != nil {
		return nil, nil, err
	}
	defer stopNews()

	tr := robots.NewTransport(http.DefaultTransport, robots.Options{
		UserAgent:  userAgent,
		Now:        clk.now,
		Sleep:      clk.sleep,
		MinDelay:   -1,              // no pacing needed for a demo on loopback
		MinBackoff: 2 * time.Second, // the first retry of an unreachable robots.txt
	})
	defer tr.CloseIdleConnections()
	start := clk.now()
	out, err := crawl(ctx, newClient(tr), clk, []string{
		shop + "/", shop + "/private/report", shop + "/flaky", news + "/today",
	})
	for _, o := range out {
		fmt.Fprintf(w, "+%-4s %-8s %s", o.At.Sub(start).Round(time.Second), o.Result, o.URL)
		switch {
		case o.Status != 0:
			fmt.Fprintf(w, " (%d)", o.Status)
		case o.Result == "requeued":
			fmt.Fprintf(w, ": %s; again at +%s", o.Why, o.Next.Sub(start).Round(time.Second))
		default:
			fmt.Fprintf(w, ": %s", o.Why)
		}
		fmt.Fprintln(w)
	}
	return s, out, err
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wall := clock{now: time.Now, sleep: func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	if _, _, err := run(ctx, os.Stdout, wall); err != nil {
		log.Fatal(err)
	}
}
