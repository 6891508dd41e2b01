package frontier

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/crawlkit/robots"
)

func urlset(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, u := range urls {
		fmt.Fprintf(&b, "<url><loc>\n  %s\n</loc><lastmod>2026-01-01</lastmod></url>", u)
	}
	b.WriteString("</urlset>")
	return b.String()
}

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.String()
}

// TestAddSitemaps reads a site's sitemaps from its robots.txt: an index
// whose children are a gzip file, a plain one, a malformed one and a
// missing one, and a second index listing an index. The URLs of the
// good files are added once each, the bad ones are reported, and the
// sitemaps are fetched through the transport.
func TestAddSitemaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		files := map[string]string{
			"/robots.txt": "User-agent: *\nDisallow: /private\n\nSitemap: http://site.example/index.xml\nSitemap: /nested.xml\n",
			"/index.xml": `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
				`<sitemap><loc>http://site.example/a.xml.gz</loc></sitemap>` +
				`<sitemap><loc>http://site.example/b.xml</loc></sitemap>` +
				`<sitemap><loc>http://site.example/bad.xml</loc></sitemap>` +
				`<sitemap><loc>http://site.example/missing.xml</loc></sitemap>` +
				`<sitemap><loc>http://site.example/private/c.xml</loc></sitemap></sitemapindex>`,
			"/a.xml.gz":   gzipped(urlset("http://site.example/1", "http://site.example/2", "http://site.example/3")),
			"/b.xml":      urlset("http://site.example/3", "http://site.example/4"),
			"/bad.xml":    `<urlset><url><loc>http://site.example/5</loc></url><url><loc>`,
			"/nested.xml": `<sitemapindex><sitemap><loc>http://site.example/index.xml</loc></sitemap></sitemapindex>`,
		}
		base := newBase(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, ok := files[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, body)
		}))
		tr := robots.NewTransport(base, robots.Options{UserAgent: "TestBot"})
		f := New(tr, Options{})
		n, err := f.AddSitemaps(t.Context(), "http://site.example/")
		if n != 5 {
			t.Errorf("added %d URLs, want 5 (1 to 5, 3 once)", n)
		}
		for _, frag := range []string{"bad.xml: bad XML", "missing.xml: status 404", "private/c.xml", "index.xml: an index inside an index"} {
			if err == nil || !strings.Contains(err.Error(), frag) {
				t.Errorf("error %v, want it to name %q", err, frag)
			}
		}
		for i := 1; i <= 5; i++ {
			if _, ok := f.Lookup(fmt.Sprintf("http://site.example/%d", i)); !ok {
				t.Errorf("URL %d not added", i)
			}
		}
		if st := tr.Stats(); st.RefusedByRule != 1 {
			t.Errorf("%d refusals by rule, want the private sitemap's", st.RefusedByRule)
		}
	})
}

// TestSitemapLimits checks that a file is read up to its URL and byte
// limits and the rest reported, that the package's limits are the
// protocol's, and that a file that is not a sitemap is reported.
func TestSitemapLimits(t *testing.T) {
	if MaxSitemapURLs != 50_000 || MaxSitemapBytes != 50<<20 {
		t.Errorf("limits %d URLs, %d bytes; want the protocol's 50,000 and 50 MiB", MaxSitemapURLs, MaxSitemapBytes)
	}
	urls := make([]string, 11)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://site.example/%d", i)
	}
	locs, index, err := readSitemap(strings.NewReader(urlset(urls...)), 10, 1<<20)
	if len(locs) != 10 || index || err == nil || !strings.Contains(err.Error(), "more than 10 URLs") {
		t.Errorf("%d URLs, index %v, %v; want 10 and the limit reported", len(locs), index, err)
	}
	if locs, _, err := readSitemap(strings.NewReader(urlset(urls[:10]...)), 10, 1<<20); len(locs) != 10 || err != nil {
		t.Errorf("%d URLs at the limit: %v", len(locs), err)
	}
	for _, doc := range []string{"<html><body>not a sitemap</body></html>", "", "plain text"} {
		if _, _, err := readSitemap(strings.NewReader(doc), 10, 1<<20); err == nil {
			t.Errorf("readSitemap(%q) took it", doc)
		}
	}
	big := `<urlset><url><loc>http://site.example/a</loc></url>` + strings.Repeat(" ", 4096) + `</urlset>`
	if locs, _, err := readSitemap(strings.NewReader(big), 10, 4096); len(locs) != 1 || err == nil || !strings.Contains(err.Error(), "larger than 4096 bytes") {
		t.Errorf("a file over the byte limit: %d URLs, %v; want the first URL and the limit reported", len(locs), err)
	}
	if locs, _, err := readSitemap(strings.NewReader(big), 10, int64(len(big))); len(locs) != 1 || err != nil {
		t.Errorf("a file at the byte limit: %d URLs, %v", len(locs), err)
	}
}

// TestSitemapLocsOfPagesOnly: only a url's (or an index's sitemap's) own
// loc names a page; the locs of Google's image and video extensions, and
// links, inside a url do not.
func TestSitemapLocsOfPagesOnly(t *testing.T) {
	tests := []struct {
		doc  string
		want []string
	}{
		{`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">` +
			`<url><loc>http://s.example/a</loc><image:image><image:loc>http://s.example/img/a.jpg</image:loc></image:image>` +
			`<video:video><video:content_loc>http://s.example/v.mp4</video:content_loc><video:player_loc>http://s.example/p</video:player_loc></video:video></url>` +
			`<url><image:image><image:loc>http://s.example/img/b.jpg</image:loc></image:image><loc> http://s.example/b </loc></url></urlset>`,
			[]string{"http://s.example/a", "http://s.example/b"}},
		{`<urlset><loc>http://s.example/stray</loc><url><loc>http://s.example/c</loc></url></urlset>`,
			[]string{"http://s.example/c"}},
		{`<sitemapindex><sitemap><loc>http://s.example/1.xml</loc></sitemap><url><loc>http://s.example/not-an-index-entry</loc></url></sitemapindex>`,
			[]string{"http://s.example/1.xml"}},
	}
	for _, tt := range tests {
		locs, _, err := readSitemap(strings.NewReader(tt.doc), 10, 1<<20)
		if err != nil || !slices.Equal(locs, tt.want) {
			t.Errorf("readSitemap(%.60q...) = %q, %v; want %q", tt.doc, locs, err, tt.want)
		}
	}
}

// FuzzReadSitemap feeds readSitemap what a server may send as a sitemap:
// any bytes. It never panics, keeps at most the URLs it is allowed, each
// a trimmed non-empty loc no longer than the input, and tells an error
// from an answer: no URLs are kept from a file with no sitemap root.
func FuzzReadSitemap(f *testing.F) {
	f.Add([]byte(urlset("https://site.example/a", "https://site.example/b")))
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://site.example/s.xml</loc></sitemap></sitemapindex>`))
	f.Add([]byte(`<urlset><url><loc><![CDATA[https://site.example/c]]></loc></url><loc>`))
	f.Add([]byte(`<?xml version="1.0"?><feed/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxURLs, maxBytes = 4, 512
		locs, _, err := readSitemap(bytes.NewReader(data), maxURLs, maxBytes)
		if len(locs) > maxURLs {
			t.Fatalf("%d URLs kept, at most %d allowed", len(locs), maxURLs)
		}
		for _, l := range locs {
			if l == "" || l != strings.TrimSpace(l) || len(l) > len(data) {
				t.Fatalf("loc %q kept from %q", l, data)
			}
		}
		if err == nil && !bytes.Contains(data, []byte("urlset")) && !bytes.Contains(data, []byte("sitemapindex")) {
			t.Fatalf("%q read as a sitemap, %d URLs", data, len(locs))
		}
	})
}
