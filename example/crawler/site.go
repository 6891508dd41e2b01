package main

import (
	"embed"
	"net/http"
	"path"
	"strings"
	"sync"
)

// siteFiles is the demo site: robots.txt, sitemap.xml and the pages.
//
//go:embed site
var siteFiles embed.FS

// demoSite serves the embedded site and records every request-URI it is
// asked for, so that the crawler can show that no refused URL reached it.
// It is safe for concurrent use.
type demoSite struct {
	// mu protects hits.
	mu   sync.Mutex
	hits []string
}

// ServeHTTP answers /robots.txt and /sitemap.xml with {{origin}} replaced
// by the site's own origin, which is only known once it listens, and any
// other path with its page: "/" and "/blog/" from index.html in that
// folder, "/about" from about.html. The query is ignored.
func (s *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits = append(s.hits, r.URL.RequestURI())
	s.mu.Unlock()

	name := "site" + path.Clean(r.URL.Path)
	ctype := "text/html; charset=utf-8"
	switch {
	case r.URL.Path == "/robots.txt":
		ctype = "text/plain; charset=utf-8"
	case r.URL.Path == "/sitemap.xml":
		ctype = "application/xml"
	case strings.HasSuffix(r.URL.Path, "/"):
		name = path.Join(name, "index.html")
	default:
		name += ".html"
	}
	data, err := siteFiles.ReadFile(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if ctype != "text/html; charset=utf-8" {
		data = []byte(strings.ReplaceAll(string(data), "{{origin}}", "http://"+r.Host))
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(data)
}

// requests returns the request-URIs the site has been asked for, in order.
func (s *demoSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}
