// Command colly crawls a site with colly (github.com/gocolly/colly/v2)
// whose requests all go through robots.Transport, set up as a crawler
// author needs it:
//
//   - one User-Agent: colly's UserAgent is Options.UserAgent, so the site
//     sees on every page the crawler whose robots.txt group was obeyed;
//   - colly's own robots.txt check off (IgnoreRobotsTxt): the transport
//     decides, with one fetch per origin and one parser;
//   - a proxy set on the base *http.Transport given to robots.NewTransport,
//     never with colly's SetProxyFunc, which replaces the collector's
//     transport and with it the robots.txt check;
//   - a LimitRule per domain with Parallelism 1: the transport sends one
//     request per Crawl-delay to an origin, and more requests in flight
//     would only wait out their timeout in its queue;
//   - every refusal printed with its rule and line, from OnError, where
//     colly reports it with status 0.
//
// It serves a small site and a forward proxy on the loopback interface
// and crawls that, so it works without a network:
//
//	cd example/colly && go run .
//
// The site's files, robots.txt included, are in example/colly/site/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
	"github.com/gocolly/colly/v2"
)

// userAgent is the crawler's User-Agent, on robots.txt and on every page;
// its product token, CollyDemo, names its group in the site's robots.txt.
const userAgent = "CollyDemo/1.0 (+http://127.0.0.1/bot)"

// requestTimeout bounds one request, its politeness wait included.
const requestTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, os.Stdout, clock{}); err != nil {
		fmt.Fprintln(os.Stderr, "colly demo:", err)
		os.Exit(1)
	}
}

// clock is robots.Options.Now and Sleep, so that a test can run the crawl
// on a clock of its own. Nil fields mean real time.
type clock struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

// result is what a crawl did, seen from both ends.
type result struct {
	fetched []string // request-URIs colly received a page for
	refused []string // request-URIs the transport refused
	errors  int      // other failures
	hits    []hit    // the requests the site received
	proxied int      // requests that went through the proxy
}

// run serves the demo site and the proxy on loopback ports, crawls the
// site with colly through robots.Transport, prints what happened, and
// checks from the site's side that no refused URL reached it.
func run(ctx context.Context, stdout io.Writer, clk clock) (result, error) {
	var res result
	site := new(demoSite)
	siteURL, stopSite, err := serve(site)
	if err != nil {
		return res, err
	}
	defer stopSite()
	proxyURL, stopProxy, err := serve(newProxy(siteURL.Host))
	if err != nil {
		return res, err
	}
	defer stopProxy()

	// The proxy belongs on the base transport: the robots.txt fetches go
	// through it as well as the pages.
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyURL(proxyURL)
	tr := robots.NewTransport(base, robots.Options{
		UserAgent: userAgent,
		// The demo site is local and ours: its Crawl-delay alone paces
		// the crawl. A crawler of real sites keeps robots.DefaultMinDelay.
		MinDelay: -1,
		Now:      clk.now,
		Sleep:    clk.sleep,
	})
	defer tr.CloseIdleConnections()

	c := colly.NewCollector(
		colly.UserAgent(userAgent), // the User-Agent whose group the transport obeys
		colly.IgnoreRobotsTxt(),    // the transport decides; colly would fetch and parse again
		colly.Async(true),
		colly.AllowedDomains(siteURL.Hostname()),
		colly.StdlibContext(ctx), // an interrupt cancels the requests and their waits
	)
	// After any other transport setting: WithTransport replaces the
	// collector's transport, and SetProxyFunc would replace this one.
	c.WithTransport(tr)
	c.SetRequestTimeout(requestTimeout)
	// One rule per domain: a rule's Parallelism is shared by every domain
	// its glob matches. Its Delay stays zero, as the transport paces.
	if err := c.Limit(&colly.LimitRule{DomainGlob: siteURL.Host, Parallelism: 1}); err != nil {
		return res, err
	}

	fmt.Fprintf(stdout, "Demo: colly crawls %s through robots.Transport as %q,\n"+
		"via a proxy on %s, one request at a time. The site's files are in\n"+
		"example/colly/site/.\n\n", siteURL, policy.ProductToken(userAgent), proxyURL.Host)

	// colly runs callbacks of different requests at once.
	var mu sync.Mutex // protects res and stdout
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		// Its errors are colly's own filters (visited already, another
		// domain); refusals come to OnError.
		e.Request.Visit(e.Attr("href"))
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		res.fetched = append(res.fetched, r.Request.URL.RequestURI())
		line(stdout, "fetched", fmt.Sprint(r.StatusCode), r.Request.URL.RequestURI(), "")
	})
	c.OnError(func(r *colly.Response, err error) {
		// A refusal arrives here with status 0 and no body: the request
		// never left the client.
		mu.Lock()
		defer mu.Unlock()
		var refused *robots.DisallowedError
		if !errors.As(err, &refused) {
			res.errors++
			line(stdout, "error", "", r.Request.URL.RequestURI(), err.Error())
			return
		}
		uri, note := refusedURI(refused), why(refused)
		if from := r.Request.URL.RequestURI(); from != uri {
			// A redirect hop: the transport decides every hop, and the
			// refusal names the URL it would have gone to.
			note += ", redirected from " + from
		}
		res.refused = append(res.refused, uri)
		line(stdout, "refused", "", uri, note)
	})

	if err := c.Visit(siteURL.String()); err != nil {
		return res, err
	}
	c.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}

	res.hits = site.requests()
	var leaked []string
	for _, h := range res.hits {
		if h.Via == proxyVia {
			res.proxied++
		}
		if slices.Contains(res.refused, h.URI) {
			leaked = append(leaked, h.URI)
		}
	}
	if len(leaked) > 0 {
		return res, fmt.Errorf("the demo site was sent refused URLs: %q", leaked)
	}
	st := tr.Stats()
	fmt.Fprintf(stdout, "\nFetched %d pages; refused %d URLs (%d decisions allowed, %d refused).\n"+
		"The site received %d requests, %d for robots.txt, %d through the proxy,\n"+
		"and none for a refused URL: a refused request never leaves the client.\n",
		len(res.fetched), len(res.refused), st.Allowed, st.Refused,
		len(res.hits), countURI(res.hits, "/robots.txt"), res.proxied)
	return res, nil
}

// why names the rule and line that refused a URL, or the unreachable
// robots.txt and when it is fetched again.
func why(e *robots.DisallowedError) string {
	switch {
	case e.Rule != nil:
		return e.Rule.String()
	case e.Unreachable:
		return "robots.txt unreachable, next try at " + e.RetryAt.Format(time.TimeOnly)
	}
	return e.Error()
}

// refusedURI is the request-URI of the refused URL.
func refusedURI(e *robots.DisallowedError) string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return e.URL
	}
	return u.RequestURI()
}

// serve serves h on a loopback port until the returned stop is called.
func serve(h http.Handler) (*url.URL, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}, func() { srv.Close() }, nil
}

// line prints one URL's outcome in columns.
func line(w io.Writer, what, status, uri, note string) {
	fmt.Fprintf(w, "%s\n", strings.TrimRight(fmt.Sprintf("%-8s %3s  %-26s  %s", what, status, uri, note), " "))
}

// countURI returns how many hits asked for uri.
func countURI(hits []hit, uri string) int {
	n := 0
	for _, h := range hits {
		if h.URI == uri {
			n++
		}
	}
	return n
}
