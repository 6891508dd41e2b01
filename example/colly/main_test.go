package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/policy"
	"github.com/gocolly/colly/v2"
)

// crawl runs the demo on an injected clock, so that the site's
// Crawl-delay costs no time, and returns what it did and printed.
func crawl(t *testing.T) (result, string) {
	t.Helper()
	clk := fakeclock.New()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // only a hang reaches it
	defer cancel()
	var out bytes.Buffer
	res, err := run(ctx, &out, clock{now: clk.Now, sleep: clk.Sleep})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// sitePages returns the request-URI of every page of the demo site, and
// the site's robots.txt parsed.
func sitePages(t *testing.T) ([]string, *policy.Robots) {
	t.Helper()
	data, err := siteFiles.ReadFile("site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	err = fs.WalkDir(siteFiles, "site", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		uri := strings.TrimPrefix(p, "site")
		pages = append(pages, strings.TrimSuffix(uri, "index.html"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages, policy.Parse(data)
}

func TestDemo(t *testing.T) {
	res, out := crawl(t)
	pages, rules := sitePages(t)
	token := policy.ProductToken(userAgent)
	hitURIs := make([]string, len(res.hits))
	for i, h := range res.hits {
		hitURIs[i] = h.URI
	}

	t.Run("every page robots.txt allows was fetched, and no other", func(t *testing.T) {
		for _, p := range pages {
			allowed := rules.Decide(p, token).Allowed
			if fetched := slices.Contains(res.fetched, p); fetched != allowed {
				t.Errorf("%s: allowed %v, fetched %v", p, allowed, fetched)
			}
		}
	})

	t.Run("no refused URL reached the site", func(t *testing.T) {
		for _, r := range res.refused {
			if slices.Contains(hitURIs, r) {
				t.Errorf("refused %s reached the site", r)
			}
		}
		for _, want := range []string{"/private/report.html", movedTo, "/products/?sort=price", "/products/?sort=name"} {
			if !slices.Contains(res.refused, want) {
				t.Errorf("%s was not refused; refused: %q", want, res.refused)
			}
		}
	})

	t.Run("each refusal is printed with its rule and line", func(t *testing.T) {
		for _, want := range []string{
			"refused       /private/report.html        Disallow: /private/ (line 10)\n",
			"refused       " + movedTo + "   Disallow: /private/ (line 10), redirected from /old-report\n",
			"refused       /products/?sort=price       Disallow: /*?sort= (line 12)\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("one User-Agent, one robots.txt fetch, every request through the proxy", func(t *testing.T) {
		for _, h := range res.hits {
			if h.UserAgent != userAgent || h.Via != proxyVia {
				t.Errorf("%s reached the site as %q via %q, want %q via %q", h.URI, h.UserAgent, h.Via, userAgent, proxyVia)
			}
		}
		if n := countURI(res.hits, "/robots.txt"); n != 1 {
			t.Errorf("robots.txt fetched %d times, want once: colly's own check must stay off", n)
		}
		if res.proxied != len(res.hits) || res.errors != 0 {
			t.Errorf("%d of %d requests proxied, %d errors", res.proxied, len(res.hits), res.errors)
		}
	})
}

// TestDomainGlobHasPort checks what docs/frameworks.md's colly section says of
// LimitRule: colly matches DomainGlob against URL.Host, port included, so
// a glob of the bare host name matches nothing on a site with a port and
// the rule silently does not apply; and that that doc and this demo
// both give the rule the host with its port.
func TestDomainGlobHasPort(t *testing.T) {
	host := "site.example:8080" // a URL.Host with a port
	for glob, want := range map[string]bool{"site.example": false, host: true} {
		rule := &colly.LimitRule{DomainGlob: glob, Parallelism: 1}
		if err := rule.Init(); err != nil {
			t.Fatal(err)
		}
		if rule.Match(host) != want {
			t.Errorf("DomainGlob %q matches %q: %v, want %v", glob, host, !want, want)
		}
	}
	readme, err := os.ReadFile("../../docs/frameworks.md")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	glob := regexp.MustCompile(`LimitRule\{DomainGlob: ([^,]+),`)
	r, d := glob.FindSubmatch(readme), glob.FindSubmatch(demo)
	if r == nil || d == nil || string(r[1]) != "siteURL.Host" || string(d[1]) != "siteURL.Host" {
		t.Errorf("DomainGlob in docs/frameworks.md %q and in main.go %q, want siteURL.Host in both", r, d)
	}
}
