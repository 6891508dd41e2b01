package frontier_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/frontier"
)

// Workers take URLs from the frontier, send them through the transport
// and give them back with the outcome; the frontier retries what can be
// retried and keeps every URL's final state.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.05\n")
			return
		}
		io.WriteString(w, "a page")
	}))
	defer site.Close()

	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: 10 * time.Millisecond, MaxCrawlDelay: time.Second})
	f := frontier.New(tr, frontier.Options{})
	for _, path := range []string{"/", "/about", "/private/x", "/about#team"} {
		if _, err := f.Add(site.URL + path); err != nil {
			fmt.Println(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				lease, err := f.Next(ctx)
				if err != nil {
					return // frontier.ErrEmpty: every URL is done, refused or failed
				}
				req, _ := http.NewRequestWithContext(lease.Context(ctx), http.MethodGet, lease.URL, nil)
				resp, err := tr.RoundTrip(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body) // the page's work goes here
					resp.Body.Close()
				}
				f.Done(ctx, lease, resp, err)
			}
		})
	}
	wg.Wait()

	st := f.Stats()
	fmt.Printf("done %d, refused %d, failed %d\n", st.Done, st.Refused, st.Failed)
	u, _ := f.Lookup(site.URL + "/private/x")
	fmt.Println(u.State)
	// Output:
	// done 2, refused 1, failed 0
	// refused
}
