package robots

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/robots/policy"
)

// fetcher makes one robots.txt fetch at a time and turns it into a
// fetchResult: a conditional GET with the stored validators, redirects
// followed on the base RoundTripper, the body read under the size limit
// (unparsed: the renewal parses the body the record keeps) and the
// status rules of RFC 9309 section 2.3.1. It holds no state of its own
// and is safe for concurrent use.
type fetcher struct {
	base         http.RoundTripper
	userAgent    string
	maxRedirects int
	maxSize      int
	timeout      time.Duration
	now          func() time.Time
	logger       *slog.Logger
	// pausedUntil returns the end of the Retry-After pause of u's origin
	// (the transport sets the pacer's; none until then): a redirect into
	// an origin paused is not followed before it ends.
	pausedUntil func(ctx context.Context, u *url.URL, now time.Time) time.Time
	// answerer is the base when it answers challenges (see Answerer).
	answerer Answerer
}

// Outcome is what fetching an origin's robots.txt came to, and so how its
// requests are decided (RFC 9309 section 2.3.1).
type Outcome int

const (
	// Parsed: the robots.txt was fetched (2xx) and its rules decide.
	Parsed Outcome = iota + 1
	// Unavailable: the server answered 4xx (except 429), or redirected
	// too often; every request is allowed.
	Unavailable
	// Unreachable: 429, 5xx, a timeout, a network error, a broken body
	// or a proxy's 407 (the site not reached);
	// every request is refused until a later fetch succeeds, and after
	// Options.FallbackAfter the last good copy is used.
	Unreachable
)

// String returns "parsed", "unavailable" or "unreachable".
func (o Outcome) String() string {
	switch o {
	case Parsed:
		return "parsed"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// fetchResult is what one fetch of an origin's robots.txt came to, as the
// fetcher makes it: what the origin's record is taken on from.
type fetchResult struct {
	outcome      Outcome
	status       int           // the final status; 0 when none arrived
	body         []byte        // when Parsed: the file cut to the size limit, unparsed
	size         int64         // decoded bytes kept, at most the size limit
	truncated    bool          // the file was longer than the size limit
	maxAge       time.Duration // Cache-Control max-age; negative when none
	age          time.Duration // the response's Age header
	noCache      bool          // Cache-Control no-cache or no-store
	retryAfter   time.Duration // a 429 or 503's Retry-After
	notModified  bool          // a 304 confirmed the stored copy
	etag         string        // validators of a parsed body
	lastModified string
	vary         bool          // the response varies by User-Agent
	url          string        // the last URL requested, after redirects
	err          error         // why unreachable, or why a redirect was not followed
	took         time.Duration // how long the fetch took, redirects included
	// deferred, if not zero, is the end of the pause of the origin a
	// redirect led into, at deferredBy: the fetch stopped short of it, to
	// be made again then, and came to nothing to keep.
	deferred   time.Time
	deferredBy *url.URL
}

// unreachable is the result of a fetch of robotsURL that got no answer
// to go by, for err.
func unreachable(robotsURL string, err error) fetchResult {
	return fetchResult{outcome: Unreachable, maxAge: -1, url: robotsURL, err: err}
}

// class names the kind of answer the fetch ended on, for Stats.FetchStatus.
func (r fetchResult) class() string {
	if r.status == 0 {
		return "network"
	}
	return strconv.Itoa(r.status/100) + "xx"
}

// validators are the ETag and Last-Modified of the copy to revalidate.
type validators struct{ etag, lastModified string }

// fetch gets the robots.txt at robotsURL, sending host as its Host
// header when it is not "" (a Host override), bounded by the fetcher's
// timeout. ctx is the renewal's, already detached from the callers'
// cancellation. The fetch runs in the caller's goroutine, whose stack
// has grown already: only each hop's call of the base runs in a
// goroutine of its own (see exchange).
func (f *fetcher) fetch(ctx context.Context, robotsURL *url.URL, host string, v validators) fetchResult {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	return f.fetchHops(ctx, robotsURL, host, v)
}

// fetchHops follows redirects up to the fetcher's limit, rather than
// leaving them to an http.Client, so that each hop is bounded like the
// first.
func (f *fetcher) fetchHops(ctx context.Context, at *url.URL, host string, v validators) fetchResult {
	// Each hop's URL is made a string once: it names the result, and
	// the hops so far tell a loop.
	cur := at.String()
	robotsURL, seen := cur, []string{cur}
	for hops := 0; ; hops++ {
		res := fetchResult{maxAge: -1, url: cur}
		resp, err := f.get(ctx, at, host, v)
		if err != nil {
			res.outcome, res.err = Unreachable, f.fetchError(ctx, err)
			return res
		}
		res.status = resp.StatusCode
		res.vary = variesByUserAgent(resp.Header)
		// What a good outcome is kept by; next reads none of it for an
		// unreachable one.
		res.maxAge, res.age, res.noCache = cacheControl(resp.Header)
		// "Etag" is the key net/http keeps ETag under: asked so, the
		// header's name is not copied to canonical form on every fetch.
		res.etag, res.lastModified = resp.Header.Get("Etag"), resp.Header.Get("Last-Modified")
		switch code := resp.StatusCode; {
		case code >= 200 && code <= 299:
			return f.readBody(ctx, resp, res)
		case code == http.StatusNotModified && (v.etag != "" || v.lastModified != ""):
			discard(ctx, resp.Body)
			res.notModified = true
			res.outcome = Parsed
			return res
		case isRedirect(code) && resp.Header.Get("Location") != "":
			where := resp.Header.Get("Location")
			discard(ctx, resp.Body)
			loc, err := at.Parse(where)
			var next string
			if err == nil {
				loc.Fragment, loc.RawFragment = "", ""
				next = loc.String()
			}
			switch {
			case err != nil || !isHTTP(loc.Scheme) || loc.Host == "":
				res.err = fmt.Errorf("robots: %s redirects to %q, which is not an http(s) URL", cur, where)
			case hops >= f.maxRedirects:
				res.err = fmt.Errorf("robots: %s: more than %d redirects", robotsURL, f.maxRedirects)
			case slices.Contains(seen, next):
				res.err = fmt.Errorf("robots: %s: redirect loop back to %s", robotsURL, next)
			default:
				seen = append(seen, next)
				if !strings.EqualFold(loc.Host, at.Host) {
					// The Host override names the first server only.
					host = ""
				}
				if !strings.EqualFold(loc.Host, at.Host) || loc.Scheme != at.Scheme {
					// No request goes to another origin in its pause.
					if until := f.pausedUntil(ctx, loc, f.now()); until.After(f.now()) {
						res.deferred, res.deferredBy = until, loc
						res.err = fmt.Errorf("robots: %s redirects to %s, in a Retry-After pause until %s", cur, next, until.UTC().Format(time.RFC3339))
						return res
					}
				}
				at, cur = loc, next
				continue
			}
			// RFC 9309 section 2.3.1.2: a robots.txt not reached within
			// the redirects followed may be assumed unavailable.
			res.outcome = Unavailable
			return res
		case code == http.StatusTooManyRequests || code == http.StatusProxyAuthRequired || code >= 500 || code < 200:
			// Section 2.3.1.4; 429 is treated as a server error, as
			// Google does, since it asks the crawler to back off. A 407
			// is a proxy's, never the site's: the robots.txt was not
			// reached, which allows nothing.
			res.outcome = Unreachable
			res.err = fmt.Errorf("robots: %s answered %s", at, resp.Status)
			res.retryAfter = retryAfter(resp.Header, f.now())
			discard(ctx, resp.Body)
			return res
		default:
			// Other 4xx (section 2.3.1.3), and a 3xx that names no
			// location to follow.
			res.outcome = Unavailable
			discard(ctx, resp.Body)
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

// get sends one GET for the robots.txt at u on the base RoundTripper, with
// the validators of the stored copy. gzip is asked for explicitly so that
// the body arrives as sent whatever the base, and is decoded here under
// the size limit.
func (f *fetcher) get(ctx context.Context, u *url.URL, host string, v validators) (*http.Response, error) {
	// u is parsed already: the request takes a copy of it rather than
	// parsing its string again, and its header fields by their
	// canonical names.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "", nil)
	if err != nil {
		return nil, err
	}
	target := *u
	req.URL, req.Host = &target, host
	if f.userAgent != "" {
		req.Header["User-Agent"] = []string{f.userAgent}
	}
	req.Header["Accept-Encoding"] = []string{"gzip"}
	if v.etag != "" {
		req.Header["If-None-Match"] = []string{v.etag}
	}
	if v.lastModified != "" {
		req.Header["If-Modified-Since"] = []string{v.lastModified}
	}
	resp, err := f.exchange(ctx, req)
	if err == nil && f.answerer != nil {
		resp, err = f.answered(ctx, req, resp)
	}
	if err == nil && resp.Body == nil {
		resp.Body = http.NoBody
	}
	return resp, err
}

// answered sends, once, the request the base's Answerer makes of resp,
// the response to req: a site that challenges the robots.txt fetch (a
// signature asked, say) is decided by the robots.txt behind the
// challenge, not by the challenge's status. A challenge the Answerer
// cannot answer leaves resp the response.
func (f *fetcher) answered(ctx context.Context, req *http.Request, resp *http.Response) (*http.Response, error) {
	ans, err := f.answerer.Answer(req, resp)
	if err != nil {
		f.logger.Debug("robots: robots.txt challenge not answered", "url", req.URL.Redacted(), "error", err)
		return resp, nil
	}
	if ans == nil {
		return resp, nil
	}
	discard(ctx, resp.Body)
	return f.exchange(ctx, ans)
}

// answer is what the base answered a fetch's request.
type answer struct {
	resp *http.Response
	err  error
}

// exchange sends req on the base in a goroutine of its own: a base
// RoundTripper may ignore its context, and the fetcher's timeout must
// bound it all the same. A response that comes after the timeout is
// closed unread. A panic of the base, which would otherwise end the
// process from that goroutine, is recovered, logged with its stack and
// taken as no response. (A body that stalls is bounded by closing it;
// see readBody.)
func (f *fetcher) exchange(ctx context.Context, req *http.Request) (*http.Response, error) {
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				f.logger.Error("robots: panic during robots.txt fetch", "url", req.URL.String(), "panic", p, "stack", string(debug.Stack()))
				done <- answer{err: fmt.Errorf("panic during fetch: %v", p)}
			}
		}()
		resp, err := send(f.base, req)
		done <- answer{resp, err}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-ctx.Done():
		// Too late: the fetch goes on without the answer, which is
		// closed unread whenever it comes. Its one receiver owns it.
		go func() {
			if a := <-done; a.resp != nil {
				a.resp.Body.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// fetchError explains a failed exchange, naming a timeout as such.
func (f *fetcher) fetchError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("robots: no complete answer within %v: %w", f.timeout, err)
	}
	return fmt.Errorf("robots: %w", err)
}

// readBody reads a 2xx robots.txt under the size limit. A body that
// breaks off is an unreachable robots.txt, not a shorter one: its missing
// lines might have been the ones refusing.
func (f *fetcher) readBody(ctx context.Context, resp *http.Response, res fetchResult) fetchResult {
	// Closing the body when ctx ends unblocks a read from a base
	// RoundTripper that does not watch the context itself.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	defer resp.Body.Close()
	body, truncated, err := readLimited(resp.Body, resp.Header.Get("Content-Encoding"), f.maxSize)
	if err != nil {
		res.outcome, res.err = Unreachable, f.fetchError(ctx, fmt.Errorf("reading %s: %w", res.url, err))
		return res
	}
	res.outcome, res.body, res.size, res.truncated = Parsed, body, int64(len(body)), truncated
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
// costs no more. limit is at most MaxMaxSize, so its arithmetic cannot
// overflow. It returns the kept bytes and whether content past the limit
// was ignored.
func readLimited(body io.Reader, encoding string, limit int) ([]byte, bool, error) {
	limit = min(max(limit, 0), MaxMaxSize)
	r := body
	switch enc := strings.ToLower(strings.TrimSpace(encoding)); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		// A quarter over the limit leaves room for gzip's framing of
		// incompressible text.
		zr, err := gzip.NewReader(&rawLimitReader{r: body, n: int64(limit) + int64(limit)/4})
		if err != nil {
			return nil, false, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	default:
		return nil, false, fmt.Errorf("unsupported Content-Encoding %q", encoding)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	switch {
	case errors.Is(err, errRawLimit) && len(data) > limit:
		return policy.Truncate(data, limit), true, nil
	case errors.Is(err, errRawLimit):
		// The cut fell inside the compressed stream: keep the complete
		// lines, as policy.Truncate does at the limit.
		return data[:bytes.LastIndexAny(data, "\n\r")+1], true, nil
	case err != nil:
		return nil, false, err
	case len(data) > limit:
		return policy.Truncate(data, limit), true, nil
	}
	return data, false, nil
}

// cacheControl reads the freshness a response asks for: its Cache-Control
// max-age (-1 when none or unreadable), its Age, and whether it says
// no-cache or no-store (RFC 9111 sections 5.1 and 5.2.2).
func cacheControl(h http.Header) (maxAge, age time.Duration, noCache bool) {
	maxAge = -1
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch name = strings.TrimSpace(name); {
			case strings.EqualFold(name, "no-cache"), strings.EqualFold(name, "no-store"):
				noCache = true
			case strings.EqualFold(name, "max-age") && maxAge < 0:
				maxAge = seconds(strings.Trim(strings.TrimSpace(val), `"`))
			}
		}
	}
	if a := seconds(strings.TrimSpace(h.Get("Age"))); a > 0 {
		age = a
	}
	return maxAge, age, noCache
}

// seconds reads a delta-seconds value (RFC 9111 section 1.2.2), digits
// alone, saturating at the longest duration; -1 when s is not one ("+5"
// and "-5" are not).
func seconds(s string) time.Duration {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return -1
	}
	n, err := strconv.ParseInt(s, 10, 64)
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

// RetryAfter returns when a 429 or 503 response asks requests to its
// origin to resume, by its Retry-After read at now (RFC 9110 section
// 10.2.3), and whether it asks a wait: a Transport pauses the origin
// until then, at most Options.MaxBackoff. Any other status, and a
// Retry-After missing, unreadable or naming no time after now, asks
// none: a crawler then retries on its own backoff.
func RetryAfter(resp *http.Response, now time.Time) (time.Time, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return time.Time{}, false
	}
	if d := retryAfter(resp.Header, now); d > 0 {
		return now.Add(d), true
	}
	return time.Time{}, false
}

// retryAfter returns how long from now a Retry-After header asks to wait,
// given in seconds or as an HTTP date, or 0 when there is none or it
// cannot be read.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		if d := seconds(v); d >= 0 {
			return d
		}
		return 0
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return max(at.Sub(now), 0)
}

// variesByUserAgent reports whether a response's Vary header names
// User-Agent (or "*"), so that another user agent may get another file.
func variesByUserAgent(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "*" || strings.EqualFold(f, "User-Agent") {
				return true
			}
		}
	}
	return false
}

// drainLimit bounds how much of an unused response body is read so that
// its connection can be reused; a longer body is closed unread.
const drainLimit = 4 << 10

// discard drains body up to drainLimit and closes it, or closes it
// unread when ctx ends first: a base that does not watch the context
// may send a body that never ends.
func discard(ctx context.Context, body io.ReadCloser) {
	stop := context.AfterFunc(ctx, func() { body.Close() })
	io.Copy(io.Discard, io.LimitReader(body, drainLimit))
	if stop() {
		body.Close() // else ctx's end closed it
	}
}

// send sends req on base, holding base to the RoundTripper contract: it
// returns a response or an error, never both or neither.
func send(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := base.RoundTrip(req)
	switch {
	case err != nil:
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, err
	case resp == nil:
		return nil, errNoResponse
	}
	return resp, nil
}

// errNoResponse is returned when the base RoundTripper breaks its contract
// by returning neither a response nor an error.
var errNoResponse = errors.New("robots: base RoundTripper returned neither a response nor an error")
