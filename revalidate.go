package robots

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gregjones/httpcache"
)

// The robots fetcher revalidates robots.txt with ETag and Last-Modified
// through httpcache. Two adapters sit around it so that httpcache only
// ever adds validators: the transport alone decides when a copy is stale,
// by its own clock and the status rules.

// responseStore is the httpcache.Cache that httpcache keeps robots.txt
// responses in. It drops the Date header and any stale-if-error directive
// from what it stores: without a Date httpcache finds every stored copy
// stale, so it never answers from its cache without asking the server
// (which would read its own wall clock rather than Options.Now), and
// without stale-if-error it never hides a 5xx or a network error behind an
// old copy (which would break the status rules and leak the error
// response's body).
type responseStore struct{ httpcache.Cache }

// Set stores the response dumped in data without its freshness headers.
// It edits the header lines as text: httputil.DumpResponse, which wrote
// them, puts one header per line and never folds a value.
func (s responseStore) Set(key string, data []byte) {
	head, body, ok := bytes.Cut(data, []byte("\r\n\r\n"))
	if !ok {
		s.Cache.Delete(key)
		return
	}
	out := make([]byte, 0, len(data))
	for i, line := range bytes.Split(head, []byte("\r\n")) {
		if i > 0 {
			name, value, _ := bytes.Cut(line, []byte(":"))
			switch n := string(bytes.TrimSpace(name)); {
			case strings.EqualFold(n, "Date"), strings.EqualFold(n, httpcache.XFromCache):
				continue
			case strings.EqualFold(n, "Cache-Control"):
				v := withoutStaleIfError(string(value))
				if v == "" {
					continue
				}
				line = []byte("Cache-Control: " + v)
			}
			out = append(out, "\r\n"...)
		}
		out = append(out, line...)
	}
	out = append(out, "\r\n\r\n"...)
	s.Cache.Set(key, append(out, body...))
}

// withoutStaleIfError removes the stale-if-error directive from a
// Cache-Control value.
func withoutStaleIfError(v string) string {
	parts := strings.Split(v, ",")
	kept := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(name, "stale-if-error") && strings.TrimSpace(p) != "" {
			kept = append(kept, strings.TrimSpace(p))
		}
	}
	return strings.Join(kept, ", ")
}

// drainLimit bounds how much of an unused response body is read so that
// its connection can be reused; a longer body is closed unread.
const drainLimit = 4 << 10

// errNoResponse is returned when the base RoundTripper breaks its contract
// by returning neither a response nor an error.
var errNoResponse = errors.New("robots: base RoundTripper returned neither a response nor an error")

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

// guardedTransport sits between httpcache and the base RoundTripper. It
// closes the body of every 304 before httpcache sees it, because httpcache
// replaces a 304 with its stored copy and drops the network body without
// closing it, which would leak the connection. It also holds the base to
// its contract: a response or an error, never both or neither.
type guardedTransport struct{ base http.RoundTripper }

// RoundTrip sends req on the base RoundTripper.
func (g guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := send(g.base, req)
	switch {
	case err != nil:
		return nil, err
	case resp.Body == nil:
		resp.Body = http.NoBody
	case resp.StatusCode == http.StatusNotModified:
		discard(resp.Body)
		resp.Body = http.NoBody
	}
	return resp, nil
}

// discard drains body up to drainLimit and closes it.
func discard(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, drainLimit))
	body.Close()
}
