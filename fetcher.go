package robots

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gregjones/httpcache"

	"github.com/crawlkit/robots/internal/lines"
	"github.com/crawlkit/robots/policy"
)

// fetchResult is what one fetch of an origin's robots.txt came to.
type fetchResult struct {
	outcome     Outcome
	status      int           // the final status; 0 when none arrived
	body        []byte        // when Parsed: the file cut to the size limit
	size        int64         // decoded bytes read
	truncated   bool          // the file was longer than the size limit
	maxAge      time.Duration // Cache-Control max-age; negative when none
	retryAfter  time.Duration // a 429 or 503's Retry-After
	revalidated bool          // a 304 confirmed the stored copy
	url         string        // the last URL requested
	err         error         // why unreachable, or why a redirect was not followed
}

// fetch gets origin's robots.txt and applies the status rules of RFC 9309
// section 2.3.1. ctx bounds the whole fetch, redirects and body included.
// Redirects are followed here, on the fetch transport, up to
// Options.MaxRedirects hops, rather than by an http.Client, so that each
// hop is revalidated and bounded like the first.
func (t *Transport) fetch(ctx context.Context, origin string) fetchResult {
	target, err := url.Parse(origin + "/robots.txt")
	if err != nil {
		return fetchResult{outcome: Unreachable, maxAge: -1, err: fmt.Errorf("robots: %w", err)}
	}
	seen := map[string]bool{target.String(): true}
	for hops := 0; ; hops++ {
		res := fetchResult{maxAge: -1, url: target.String()}
		resp, err := t.get(ctx, target)
		if err != nil {
			res.outcome, res.err = Unreachable, t.fetchError(ctx, err)
			return res
		}
		res.status = resp.StatusCode
		switch code := resp.StatusCode; {
		case code >= 200 && code <= 299:
			return t.readBody(ctx, resp, res)
		case isRedirect(code) && resp.Header.Get("Location") != "":
			where := resp.Header.Get("Location")
			discard(resp.Body)
			loc, err := target.Parse(where)
			switch {
			case err != nil || !isHTTP(loc.Scheme) || loc.Host == "":
				res.err = fmt.Errorf("robots: %s redirects to %q, which is not an http(s) URL", target, where)
			case hops >= t.maxRedirects:
				res.err = fmt.Errorf("robots: %s: more than %d redirects", origin+"/robots.txt", t.maxRedirects)
			case seen[loc.String()]:
				res.err = fmt.Errorf("robots: %s: redirect loop back to %s", origin+"/robots.txt", loc)
			default:
				loc.Fragment, loc.RawFragment = "", ""
				seen[loc.String()] = true
				target = loc
				continue
			}
			// RFC 9309 section 2.3.1.2: a robots.txt not reached within
			// the redirects followed may be assumed unavailable.
			res.outcome = Unavailable
			return res
		case code == http.StatusTooManyRequests || code >= 500 || code < 200:
			// Section 2.3.1.4; 429 is treated as a server error, as
			// Google does, since it asks the crawler to back off.
			res.outcome = Unreachable
			res.err = fmt.Errorf("robots: %s answered %s", target, resp.Status)
			res.retryAfter = retryAfter(resp.Header, t.now())
			discard(resp.Body)
			return res
		default:
			// Other 4xx (section 2.3.1.3), and a 3xx that names no
			// location to follow.
			res.outcome = Unavailable
			discard(resp.Body)
			return res
		}
	}
}

// isRedirect reports whether code is a redirect that names its target in
// Location.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// get sends one GET for the robots.txt at u through httpcache, which adds
// validators when it holds a copy. gzip is asked for explicitly so that
// the body arrives as sent whatever the base RoundTripper, is stored
// compressed, and is decoded here under the size limit.
func (t *Transport) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if t.userAgent != "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	return t.fetcher.RoundTrip(req)
}

// fetchError explains a failed exchange, naming a timeout as such.
func (t *Transport) fetchError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("robots: no complete answer within %v: %w", t.fetchTimeout, err)
	}
	return fmt.Errorf("robots: %w", err)
}

// readBody reads a 2xx robots.txt under the size limit. A body that
// breaks off is an unreachable robots.txt, not a shorter one: its missing
// lines might have been the ones refusing.
func (t *Transport) readBody(ctx context.Context, resp *http.Response, res fetchResult) fetchResult {
	// Closing the body when ctx ends unblocks a read from a base
	// RoundTripper that does not watch the context itself.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	defer resp.Body.Close()
	res.maxAge = maxAge(resp.Header)
	res.revalidated = resp.Header.Get(httpcache.XFromCache) != ""
	body, size, truncated, err := readLimited(resp.Body, resp.Header.Get("Content-Encoding"), t.maxSize)
	if err != nil {
		res.outcome, res.err = Unreachable, t.fetchError(ctx, fmt.Errorf("reading %s: %w", res.url, err))
		return res
	}
	res.outcome, res.body, res.size, res.truncated = Parsed, body, size, truncated
	return res
}

// errRawLimit ends a compressed body that is much longer than the limit,
// even though it decodes to less: deflate can spend any number of bytes on
// empty blocks.
var errRawLimit = errors.New("robots: compressed body over the limit")

// rawLimitReader reads at most n bytes from r, then fails with
// errRawLimit.
type rawLimitReader struct {
	r io.Reader
	n int64
}

func (l *rawLimitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errRawLimit
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// readLimited reads body, decoded according to encoding, keeping at most
// limit decoded bytes cut back to the last complete line (RFC 9309 section
// 2.5); it reads at most one byte past the limit, so a huge or endless body
// costs no more. It returns the kept bytes, how many decoded bytes were
// read and whether content past the limit was ignored.
func readLimited(body io.Reader, encoding string, limit int) ([]byte, int64, bool, error) {
	r := body
	switch enc := strings.ToLower(strings.TrimSpace(encoding)); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		// A quarter over the limit leaves room for gzip's framing of
		// incompressible text.
		zr, err := gzip.NewReader(&rawLimitReader{r: body, n: int64(limit) + int64(limit)/4})
		if err != nil {
			return nil, 0, false, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	default:
		return nil, 0, false, fmt.Errorf("unsupported Content-Encoding %q", encoding)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	size := int64(len(data))
	switch {
	case errors.Is(err, errRawLimit):
		return lines.Complete(data), size, true, nil
	case err != nil:
		return nil, size, false, err
	case len(data) > limit:
		return policy.Truncate(data, limit), size, true, nil
	}
	return data, size, false, nil
}

// maxAge returns the max-age of a Cache-Control header, or -1 when there
// is none or it cannot be read.
func maxAge(h http.Header) time.Duration {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(d), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "max-age") {
				continue
			}
			n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
			switch {
			case errors.Is(err, strconv.ErrRange) && n > 0:
				return time.Duration(1<<63 - 1)
			case err != nil || n < 0:
				return -1
			case n > int64((1<<63-1)/time.Second):
				return time.Duration(1<<63 - 1)
			}
			return time.Duration(n) * time.Second
		}
	}
	return -1
}
