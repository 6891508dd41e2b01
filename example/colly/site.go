package main

import (
	"embed"
	"net/http"
	"net/http/httputil"
	"path"
	"strings"
	"sync"
)

// siteFiles is the demo site: robots.txt and the pages.
//
//go:embed site
var siteFiles embed.FS

// hit is one request the demo site received.
type hit struct {
	URI       string // the request-URI
	UserAgent string
	Via       string // the Via header a proxy added, "" without one
}

// demoSite serves the embedded site and records every request, so that the
// demo can show what reached it. It is safe for concurrent use.
type demoSite struct {
	// mu protects hits.
	mu   sync.Mutex
	hits []hit
}

// movedTo is where the site redirects /old-report: a page that robots.txt
// disallows, to show that the transport checks every redirect hop.
const movedTo = "/private/report-2024.html"

// ServeHTTP answers /old-report with a redirect to movedTo and any other
// path with its file: a path ending in "/" with the index.html of that
// folder. The query is ignored.
func (s *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits = append(s.hits, hit{URI: r.URL.RequestURI(), UserAgent: r.UserAgent(), Via: r.Header.Get("Via")})
	s.mu.Unlock()

	if r.URL.Path == "/old-report" {
		http.Redirect(w, r, movedTo, http.StatusMovedPermanently)
		return
	}
	name := "site" + path.Clean(r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") {
		name = path.Join(name, "index.html")
	}
	data, err := siteFiles.ReadFile(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ctype := "text/html; charset=utf-8"
	if r.URL.Path == "/robots.txt" {
		ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(data)
}

// requests returns the requests the site received, in order.
func (s *demoSite) requests() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

// proxyVia is the Via header the demo proxy adds (RFC 9110 section 7.6.3).
const proxyVia = "1.1 colly-demo-proxy"

// newProxy returns a forward proxy for plain HTTP that forwards only to
// the host site (host:port), adding its Via header, so that the demo site
// can tell that a request came through it. Anything else gets 403: the
// demo opens no proxy to other hosts.
func newProxy(site string) http.Handler {
	forward := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		// A request to a forward proxy carries the absolute URL to fetch.
		pr.Out.URL = pr.In.URL
		pr.Out.Host = pr.In.Host
		pr.Out.Header.Add("Via", proxyVia)
	}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Scheme != "http" || r.URL.Host != site {
			http.Error(w, "the demo proxy forwards only to "+site, http.StatusForbidden)
			return
		}
		forward.ServeHTTP(w, r)
	})
}
