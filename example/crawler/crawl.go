package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/policy"
)

const (
	// maxPage is how much of a page is read for links.
	maxPage = 2 << 20
	// maxSitemap is how much of a sitemap is read, decompressed; the
	// sitemaps protocol allows 50 MB, more than a demo needs to hold.
	maxSitemap = 10 << 20
	// maxSitemaps is how many sitemaps, index files included, are read.
	maxSitemaps = 10
	// requestTimeout bounds one request, its politeness wait included, so
	// it must exceed robots.DefaultMaxCrawlDelay.
	requestTimeout = 2 * robots.DefaultMaxCrawlDelay
)

// config is one crawl.
type config struct {
	start    *url.URL
	max      int               // URLs to visit
	agent    string            // User-Agent, whose product token picks the groups
	minDelay time.Duration     // robots.Options.MinDelay
	base     http.RoundTripper // under the robots transport: the Web Bot Auth signer, or nil
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
}

// crawler visits one origin breadth-first through a robots.Transport,
// seeded from the origin's sitemaps. It is not safe for concurrent use:
// the transport paces requests to one origin anyway.
type crawler struct {
	cfg    config
	tr     *robots.Transport
	client *http.Client
	origin string
	out    *report

	rules *policy.Robots  // the origin's robots.txt, nil without rules
	seen  map[string]bool // every URL queued or visited
	queue []*url.URL
}

func newCrawler(cfg config, out *report) *crawler {
	tr := robots.NewTransport(cfg.base, robots.Options{
		UserAgent: cfg.agent,
		MinDelay:  cfg.minDelay,
		Now:       cfg.now,
		Sleep:     cfg.sleep,
	})
	return &crawler{
		cfg:    cfg,
		tr:     tr,
		client: &http.Client{Transport: tr, Timeout: requestTimeout},
		origin: originOf(cfg.start),
		out:    out,
		seen:   make(map[string]bool),
	}
}

// run crawls: it reads the origin's robots.txt, which the transport then
// holds for every request, queues the start URL and the URLs of the
// sitemaps, and visits the queue, adding each page's links, until it is
// empty or cfg.max URLs have been visited. Once the robots.txt is read, it
// prints a summary at the end, also when the crawl fails.
func (c *crawler) run(ctx context.Context) error {
	defer c.client.CloseIdleConnections()
	info, err := c.tr.Robots(ctx, c.cfg.start.String())
	if err != nil {
		return err
	}
	defer func() { c.out.summary(c.tr.Stats()) }()
	c.out.robots(info, policy.ProductToken(c.cfg.agent))
	c.rules = info.Policy
	c.add(c.cfg.start)
	if info.Policy != nil {
		c.readSitemaps(ctx, info.Policy.Sitemaps())
	}
	for visited := 0; len(c.queue) > 0 && visited < c.cfg.max && ctx.Err() == nil; visited++ {
		u := c.queue[0]
		c.queue = c.queue[1:]
		c.visit(ctx, u)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("crawl interrupted: %w", err)
	}
	if info.Outcome == robots.Unreachable && !info.Fallback {
		return fmt.Errorf("nothing fetched: the robots.txt of %s is unreachable", info.Origin)
	}
	return nil
}

// add queues u if it is on the crawled origin and new. No more than
// cfg.max URLs are ever queued, since no more are visited.
func (c *crawler) add(u *url.URL) {
	if originOf(u) != c.origin || len(c.seen) >= c.cfg.max {
		return
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	if k := u.String(); !c.seen[k] {
		c.seen[k] = true
		c.queue = append(c.queue, u)
	}
}

// visit fetches one page and queues its links.
func (c *crawler) visit(ctx context.Context, u *url.URL) {
	resp, err := c.get(ctx, u)
	if err != nil {
		return
	}
	defer func() {
		// Drained, the connection can carry the next request.
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxPage))
		resp.Body.Close()
	}()
	note := c.allowedBy(u)
	if r := redirectNote(u, resp); r != "" {
		note = r
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != "text/html" || originOf(resp.Request.URL) != c.origin {
		c.out.fetched(u, resp.StatusCode, note)
		return
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		c.out.failed(u, err)
		return
	}
	c.out.fetched(u, resp.StatusCode, note)
	for _, ref := range links(body) {
		if l, err := resp.Request.URL.Parse(ref); err == nil {
			c.add(l)
		}
	}
}

// readSitemaps reads the sitemaps named in robots.txt, and those their
// index files name, while the queue has room, queuing their URLs.
func (c *crawler) readSitemaps(ctx context.Context, sitemaps []string) {
	for read := 0; len(sitemaps) > 0 && read < maxSitemaps && len(c.seen) < c.cfg.max && ctx.Err() == nil; read++ {
		u, err := url.Parse(sitemaps[0])
		sitemaps = sitemaps[1:]
		if err != nil {
			continue
		}
		sm, err := c.sitemap(ctx, u)
		if err != nil {
			continue
		}
		for _, loc := range sm.URLs {
			if l, err := url.Parse(strings.TrimSpace(loc)); err == nil {
				c.add(l)
			}
		}
		sitemaps = append(sitemaps, sm.Sitemaps...)
	}
}

// sitemapFile is a sitemap (<urlset>) or a sitemap index (<sitemapindex>),
// https://www.sitemaps.org/protocol.html.
type sitemapFile struct {
	URLs     []string `xml:"url>loc"`
	Sitemaps []string `xml:"sitemap>loc"`
}

// sitemap fetches and parses one sitemap, gzip-compressed or not.
func (c *crawler) sitemap(ctx context.Context, u *url.URL) (sitemapFile, error) {
	var sm sitemapFile
	resp, err := c.get(ctx, u)
	if err != nil {
		return sm, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.out.fetched(u, resp.StatusCode, "sitemap, not read")
		return sm, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSitemap))
	if err == nil && bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(io.LimitReader(zr, maxSitemap))
		}
	}
	if err == nil {
		err = xml.Unmarshal(body, &sm)
	}
	if err != nil {
		c.out.failed(u, fmt.Errorf("sitemap unreadable: %w", err))
		return sm, err
	}
	note := fmt.Sprintf("sitemap, %d URLs", len(sm.URLs))
	if len(sm.Sitemaps) > 0 {
		note = fmt.Sprintf("sitemap index, %d sitemaps", len(sm.Sitemaps))
	}
	c.out.fetched(u, resp.StatusCode, note)
	return sm, nil
}

// get sends one GET through the transport. A URL that robots.txt refuses
// never leaves the client: the error holds a *robots.DisallowedError
// naming the rule and its line. get reports refusals and failures itself.
func (c *crawler) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		c.out.failed(u, err)
		return nil, err
	}
	resp, err := c.client.Do(req)
	var refused *robots.DisallowedError
	switch {
	case errors.As(err, &refused):
		c.out.refused(u, refused)
	case err != nil && ctx.Err() == nil:
		c.out.failed(u, err)
	}
	return resp, err
}

// hrefRE finds the href of <a> and <area> tags. The demo's pages are
// simple; on a real site this scanner is best-effort: it ignores <base>,
// and it may take an href out of a comment or a script. A crawler for
// real use would parse the HTML.
var hrefRE = regexp.MustCompile(`(?is)<(?:a|area)\s[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)

// links returns the hrefs of page, character references decoded.
func links(page []byte) []string {
	var refs []string
	for _, m := range hrefRE.FindAllSubmatch(page, -1) {
		ref := string(bytes.Join(m[1:], nil)) // only one group matched
		refs = append(refs, html.UnescapeString(strings.TrimSpace(ref)))
	}
	return refs
}

// allowedBy names the Allow rule that let u through, when one did, so
// that an exception inside a disallowed area shows; "" otherwise.
func (c *crawler) allowedBy(u *url.URL) string {
	if c.rules == nil {
		return ""
	}
	if d := c.rules.Decide(u.RequestURI(), policy.ProductToken(c.cfg.agent)); d.Matched && d.Rule.Allow {
		return d.Rule.String()
	}
	return ""
}

// redirectNote says where u ended up when the client followed redirects.
func redirectNote(u *url.URL, resp *http.Response) string {
	if final := resp.Request.URL; final.String() != u.String() {
		return "redirected to " + final.String()
	}
	return ""
}

// originOf returns scheme://host:port of u, lower-cased with the default
// port dropped, so that two spellings of one origin compare equal; ""
// when u is not an http or https URL with a host and a valid port.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" || u.Hostname() == "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return ""
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			host += ":" + strconv.FormatUint(n, 10)
		}
	}
	return scheme + "://" + host
}
