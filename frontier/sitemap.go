package frontier

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The limits of the sitemaps protocol (sitemaps.org) on one file.
const (
	MaxSitemapURLs  = 50_000
	MaxSitemapBytes = 50 << 20
)

// AddSitemaps adds the URLs of the sitemaps that the robots.txt of
// siteURL's origin names in its Sitemap lines, read through the
// transport's robots cache (no second robots.txt fetch). Each sitemap is
// fetched through the same transport, so paced and checked like a page;
// a sitemap index's sitemaps are read in turn (one level, as the
// protocol allows), gzip-compressed files included. A file is read up to
// MaxSitemapURLs URLs and MaxSitemapBytes bytes (uncompressed). It
// returns how many URLs were added; a sitemap that cannot be fetched or
// read is reported in the error, joined with the others', and the rest
// are read all the same. A full frontier (ErrFull) ends it.
func (f *Frontier) AddSitemaps(ctx context.Context, siteURL string) (int, error) {
	info, err := f.tr.Robots(ctx, siteURL)
	if err != nil {
		return 0, err
	}
	return f.addSitemaps(ctx, &http.Client{Transport: f.tr}, info.Sitemaps, 1)
}

// addSitemaps reads the sitemaps at locs and adds their URLs, reading
// the sitemaps of an index while levels are left.
func (f *Frontier) addSitemaps(ctx context.Context, client *http.Client, locs []string, levels int) (int, error) {
	added := 0
	var errs []error
	for _, loc := range locs {
		n, err := f.addSitemap(ctx, client, loc, levels)
		added += n
		if errors.Is(err, ErrFull) {
			return added, err
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return added, errors.Join(errs...)
}

// addSitemap reads the sitemap at loc and adds its URLs.
func (f *Frontier) addSitemap(ctx context.Context, client *http.Client, loc string, levels int) (int, error) {
	locs, index, err := fetchSitemap(ctx, client, loc)
	if index {
		if levels <= 0 {
			return 0, fmt.Errorf("sitemap %s: an index inside an index; not read", loc)
		}
		n, childErr := f.addSitemaps(ctx, client, locs, levels-1)
		return n, errors.Join(err, childErr)
	}
	added := 0
	for _, u := range locs {
		ok, aerr := f.Add(u)
		if errors.Is(aerr, ErrFull) {
			return added, aerr
		}
		if aerr != nil {
			err = errors.Join(err, fmt.Errorf("sitemap %s: %w", loc, aerr))
			continue
		}
		if ok {
			added++
		}
	}
	return added, err
}

// fetchSitemap fetches and reads the sitemap at loc: the locations it
// lists, whether it is an index, and what went wrong reading it (the
// locations read before an error are kept).
func fetchSitemap(ctx context.Context, client *http.Client, loc string) ([]string, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, false, fmt.Errorf("sitemap %s: %w", loc, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("sitemap %s: %w", loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("sitemap %s: status %s", loc, resp.Status)
	}
	body := bufio.NewReader(io.LimitReader(resp.Body, MaxSitemapBytes+1))
	var r io.Reader = body
	if magic, _ := body.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, false, fmt.Errorf("sitemap %s: %w", loc, err)
		}
		r = zr
	}
	locs, index, err := readSitemap(r, MaxSitemapURLs, MaxSitemapBytes)
	if err != nil {
		err = fmt.Errorf("sitemap %s: %w", loc, err)
	}
	return locs, index, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readSitemap reads a urlset or a sitemapindex of up to maxBytes bytes:
// the loc of each url or sitemap element, up to maxURLs, and whether it
// is an index. A loc elsewhere (an image's or a video's, of Google's
// extensions, inside a url) names no page.
func readSitemap(r io.Reader, maxURLs int, maxBytes int64) ([]string, bool, error) {
	cr := &countingReader{r: io.LimitReader(r, maxBytes+1)}
	dec := xml.NewDecoder(cr)
	var locs []string
	index, root, entry := false, "", "url"
	inLoc, inEntry, depth := false, false, 0
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if root == "" {
				return nil, false, errors.New("no urlset or sitemapindex element")
			}
			return locs, index, nil
		}
		if err != nil {
			if cr.n > maxBytes {
				return locs, index, fmt.Errorf("larger than %d bytes; the rest is not read", maxBytes)
			}
			return locs, index, fmt.Errorf("bad XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case root == "":
				switch t.Name.Local {
				case "urlset":
				case "sitemapindex":
					index, entry = true, "sitemap"
				default:
					return nil, false, fmt.Errorf("root element %q, want urlset or sitemapindex", t.Name.Local)
				}
				root = t.Name.Local
			case depth == 2:
				inEntry = t.Name.Local == entry
			case depth == 3 && inEntry && t.Name.Local == "loc":
				inLoc = true
				text.Reset()
			}
		case xml.CharData:
			if inLoc {
				text.Write(t)
			}
		case xml.EndElement:
			depth--
			if inLoc && depth == 2 {
				inLoc = false
				if len(locs) == maxURLs {
					return locs, index, fmt.Errorf("more than %d URLs; the rest are not read", maxURLs)
				}
				if loc := strings.TrimSpace(text.String()); loc != "" {
					locs = append(locs, loc)
				}
			}
		}
	}
}
