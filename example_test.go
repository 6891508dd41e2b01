package robots_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/crawlkit/robots"
)

// newSite starts a site whose robots.txt is robotsTxt (answered with
// status) and whose other pages echo their path.
func newSite(status int, robotsTxt string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(status)
			io.WriteString(w, robotsTxt)
			return
		}
		io.WriteString(w, "page "+r.URL.Path)
	}))
}

// A crawler wraps its client's transport; refused requests never leave
// the client.
func ExampleTransport() {
	site := newSite(200, "User-agent: ExampleBot\nDisallow: /private\n")
	defer site.Close()

	client := &http.Client{Transport: robots.NewTransport(http.DefaultTransport, robots.Options{
		UserAgent: "ExampleBot/1.0 (+https://example.com/bot)",
		MinDelay:  -1, // no pause between requests, to keep the example quick
	})}

	resp, err := client.Get(site.URL + "/public")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, string(body))

	_, err = client.Get(site.URL + "/private/page")
	var refused *robots.DisallowedError
	if errors.Is(err, robots.ErrDisallowed) && errors.As(err, &refused) {
		fmt.Println("refused for", refused.Token, "by", refused.Rule)
		fmt.Println(refused)
	}
	// Output:
	// 200 OK page /public
	// refused for ExampleBot by Disallow: /private (line 2)
	// robots: refused for ExampleBot by Disallow: /private (line 2)
}

// A crawl frontier asks before it schedules; nothing but the robots.txt is
// fetched.
func ExampleTransport_Check() {
	site := newSite(200, "User-agent: *\nAllow: /docs/public\nDisallow: /docs\n")
	defer site.Close()
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0"})

	for _, path := range []string{"/docs/public/a", "/docs/internal", "/docs/public/../internal", "/about"} {
		if err := tr.Check(context.Background(), site.URL+path); err != nil {
			fmt.Println("skip ", path)
			continue
		}
		fmt.Println("crawl", path)
	}
	fmt.Println("robots.txt fetches:", tr.Stats().Fetches[robots.Parsed])
	// Output:
	// crawl /docs/public/a
	// skip  /docs/internal
	// skip  /docs/public/../internal
	// crawl /about
	// robots.txt fetches: 1
}

// A frontier hands the transport only what robots.txt governs: a link of
// another scheme is no robots.txt matter, and no refusal either.
func ExampleErrNotHTTP() {
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0"})
	for _, link := range []string{"mailto:webmaster@site.example", "ftp://files.example/data.csv"} {
		err := tr.Check(context.Background(), link)
		fmt.Println(errors.Is(err, robots.ErrNotHTTP), errors.Is(err, robots.ErrDisallowed))
	}
	// Output:
	// true false
	// true false
}

// A crawler seeds its frontier from the sitemaps of the robots.txt it
// already holds.
func ExampleTransport_Robots() {
	site := newSite(200, "User-agent: *\nCrawl-delay: 2\nDisallow: /tmp\n\nSitemap: https://site.example/sitemap.xml\n")
	defer site.Close()
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0"})

	info, err := tr.Robots(context.Background(), site.URL+"/any/page")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Outcome, info.StatusCode)
	fmt.Println("sitemaps:", info.Policy.Sitemaps())
	fmt.Println("delay between requests:", info.Delay)
	// Output:
	// parsed 200
	// sitemaps: [https://site.example/sitemap.xml]
	// delay between requests: 2s
}

// While a site's robots.txt answers with a server error, every request to
// it is refused until the retry time, without another fetch.
func ExampleDisallowedError() {
	site := newSite(503, "")
	defer site.Close()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tr := robots.NewTransport(nil, robots.Options{
		UserAgent: "ExampleBot/1.0",
		Now:       func() time.Time { return now },
	})

	err := tr.Check(context.Background(), site.URL+"/page")
	var refused *robots.DisallowedError
	if errors.As(err, &refused) && refused.Unreachable {
		fmt.Println("unreachable; retry at", refused.RetryAt.Format(time.Kitchen))
		fmt.Println(strings.ReplaceAll(err.Error(), site.URL, "http://site.example"))
	}
	// Output:
	// unreachable; retry at 12:01PM
	// robots: refused for ExampleBot: robots.txt unreachable (http://site.example/robots.txt answered 503 Service Unavailable); retry after 2025-03-01T12:01:00Z
}

// Transports that share a store share what they fetched.
func ExampleNewMemoryCache() {
	site := newSite(200, "User-agent: *\nDisallow: /private\n")
	defer site.Close()
	store := robots.NewMemoryCache(1000, 16<<20)
	first := robots.NewTransport(nil, robots.Options{Cache: store})
	second := robots.NewTransport(nil, robots.Options{Cache: store})

	first.Check(context.Background(), site.URL+"/")
	err := second.Check(context.Background(), site.URL+"/private")
	fmt.Println(errors.Is(err, robots.ErrDisallowed))
	fmt.Println("fetches by the second transport:", second.Stats().Fetches[robots.Parsed])
	// Output:
	// true
	// fetches by the second transport: 0
}
