package explorer

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/report"
	"github.com/crawlkit/robots/policy"
)

// DefaultUserAgent is the User-Agent of the explorer's live fetches when
// Options.UserAgent is empty.
const DefaultUserAgent = "robotstxt-explorer (+https://github.com/crawlkit/robots)"

// fetchResponse is the answer to POST /api/fetch: what the project's
// fetcher made of the origin's robots.txt, with the text it parsed for the
// page's editor.
type fetchResponse struct {
	fileReport
	URL        string    `json:"url"` // the robots.txt asked for
	Origin     string    `json:"origin"`
	Outcome    string    `json:"outcome"`    // "parsed", "unavailable" or "unreachable"
	StatusCode int       `json:"statusCode"` // 0 when no answer arrived
	FetchedAt  time.Time `json:"fetchedAt"`
	Expires    time.Time `json:"expires,omitzero"` // parsed or unavailable: when it goes stale
	RetryAt    time.Time `json:"retryAt,omitzero"` // unreachable: when it is fetched again
	FetchError string    `json:"fetchError,omitempty"`
	Robots     string    `json:"robots"` // the text parsed, when parsed
	Truncated  bool      `json:"truncated,omitempty"`
}

// originURL reads what a person typed as an origin: an http(s) URL, whose
// path is ignored, or a bare host taken as https.
func originURL(s string) (*url.URL, *apiError) {
	if len(s) > MaxURLLen {
		return nil, badRequest("origin is %d bytes long; the limit is %d KiB", len(s), MaxURLLen>>10)
	}
	raw := strings.TrimSpace(s)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, badRequest("origin %q: give an http(s) origin such as https://example.com", s)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}, nil
}

func (h *handler) fetch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Origin string `json:"origin"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	target, apiErr := originURL(req.Origin)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	// A transport of its own for each fetch: the page shows what the site
	// serves now, not a copy cached by an earlier click.
	rec := &recorder{base: h.transport}
	tr := robots.NewTransport(rec, robots.Options{UserAgent: h.userAgent})
	defer tr.CloseIdleConnections()
	info, err := tr.Robots(r.Context(), target.String())
	if err != nil {
		if r.Context().Err() != nil {
			return // the page went away; nobody reads an answer
		}
		writeError(w, badRequest("origin %q: %v", req.Origin, err))
		return
	}
	resp := fetchResponse{
		URL:        info.Origin + "/robots.txt",
		Origin:     info.Origin,
		Outcome:    info.Outcome.String(),
		StatusCode: info.StatusCode,
		FetchedAt:  info.FetchedAt,
		Expires:    info.Expires,
		RetryAt:    info.RetryAt,
		Truncated:  info.Truncated,
		fileReport: fileReport{Warnings: []report.Warning{}, Groups: []report.Group{}},
	}
	if info.Err != nil {
		resp.FetchError = info.Err.Error()
	}
	if info.Outcome == robots.Parsed && info.Policy != nil {
		resp.Robots = rec.text()
		resp.fileReport = describe(info.Policy)
	}
	writeJSON(w, http.StatusOK, resp)
}

// recorder is the base RoundTripper of the explorer's fetches. It keeps a
// copy of the last 2xx body that the fetcher reads, because the transport
// hands out the parsed robots.txt but not its text. It is safe for
// concurrent use.
type recorder struct {
	base http.RoundTripper

	// mu protects last.
	mu   sync.Mutex
	last *capture
}

func (rc *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rc.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	c := &capture{encoding: resp.Header.Get("Content-Encoding")}
	rc.mu.Lock()
	rc.last = c
	rc.mu.Unlock()
	resp.Body = &teeBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

// text returns the robots.txt as the fetcher parsed it: decoded and cut to
// policy.MaxSize at a line end.
func (rc *recorder) text() string {
	rc.mu.Lock()
	c := rc.last
	rc.mu.Unlock()
	if c == nil {
		return ""
	}
	return string(policy.Truncate(c.decoded(), policy.MaxSize))
}

// capture is the start of one response body as read, enough to hold
// policy.MaxSize bytes and the one past it that shows the limit was hit,
// even when compressed.
type capture struct {
	encoding string

	// mu protects buf.
	mu  sync.Mutex
	buf bytes.Buffer
}

// captureLimit bounds a capture: the fetcher reads no more than this of
// a body, compressed or not.
const captureLimit = policy.MaxSize + policy.MaxSize/4 + 1

func (c *capture) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := captureLimit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
}

// decoded returns the captured body decoded: gzip, which the fetcher asks
// for, is undone. A compressed body cut at captureLimit is, as the fetcher
// reads it, kept up to its last complete line.
func (c *capture) decoded() []byte {
	c.mu.Lock()
	raw := bytes.Clone(c.buf.Bytes())
	c.mu.Unlock()
	switch strings.ToLower(strings.TrimSpace(c.encoding)) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil
		}
		out, err := io.ReadAll(io.LimitReader(zr, policy.MaxSize+1))
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return out[:bytes.LastIndexAny(out, "\r\n")+1]
		} else if err != nil {
			return nil
		}
		return out
	}
	return raw
}

// teeBody copies what is read from a body into a capture.
type teeBody struct {
	io.ReadCloser
	c *capture
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.c.write(p[:n])
	return n, err
}
