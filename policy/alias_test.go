package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseKeepsNoneOfTheCallersBytes parses every corpus and conformance
// file, and files made to hold every kind of finding, then overwrites the
// bytes it was given: nothing the Robots answers may change, since Parse
// reads a caller's buffer that the caller may reuse (a crawler reads each
// robots.txt into the same one).
func TestParseKeepsNoneOfTheCallersBytes(t *testing.T) {
	files := map[string][]byte{
		"findings": []byte("User-agent: Bot/1.0\nDisallow: private\nDisallow: /a b\nDisallow: /%zz\nAllow: /caf&eacute;\n" +
			"Disallow: /x&#38;#y\nSitemap: https://example.com/s.xml?a=1&amp;b=2\nSitemap: /relative.xml\nCrawl-delay: 2\n" +
			"Content-Usage: train-ai=n\nContent-Signal: search=yes, ai-train=no\nUnknown: field\n\nUser-agent: *\nDisallow: /*.pdf$\n"),
	}
	for _, glob := range []string{corpusDir + "/*.txt", "../testdata/conformance/*/robots.txt"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = Truncate(data, MaxSize)
		}
	}
	if len(files) < 100 {
		t.Fatalf("%d files; want the corpus and the conformance suites", len(files))
	}
	for name, data := range files {
		buf := append([]byte(nil), data...)
		r := Parse(buf)
		before := describe(r)
		for i := range buf {
			buf[i] = 'x'
		}
		if after := describe(r); after != before {
			t.Errorf("%s: the Robots changed with the bytes it was parsed from:\n%s", name, firstDiff(before, after))
		}
	}
}

// describe renders what r answers: its groups, sitemaps, warnings and
// what each concerns, and decisions and preferences for a few tokens and
// paths.
func describe(r *Robots) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines\n%q\n", r.Lines(), r.Sitemaps())
	for _, g := range r.Groups() {
		fmt.Fprintf(&b, "%+v\n", g)
	}
	paths := []string{"/", "/private/x", "/a b", "/caf%C3%A9", "/x&", "/file.pdf", "/search?q=1"}
	for _, w := range r.Warnings() {
		fmt.Fprintf(&b, "%+v", w)
		for _, p := range paths {
			fmt.Fprintf(&b, " %v", r.Concerns(w, p))
		}
		b.WriteByte('\n')
	}
	for _, tok := range []string{"Bot", "Googlebot", "*"} {
		for _, p := range paths {
			fmt.Fprintf(&b, "%s %s %+v %+v\n", tok, p, r.Decide(p, tok), r.Preferences(p, tok))
		}
		d, ok := r.CrawlDelay(tok)
		fmt.Fprintf(&b, "%v %v\n", d, ok)
	}
	fmt.Fprintf(&b, "%+v\n", r.ContentSignals())
	return b.String()
}

// firstDiff returns the first line where a and b differ, from each.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "before: " + al[i] + "\nafter:  " + bl[i]
		}
	}
	return "lengths differ"
}
