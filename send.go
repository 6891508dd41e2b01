package robots

import (
	"context"
	"errors"
	"net/http"
)

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

// outbound returns req as it is to be sent: req itself, or, when it
// carries no User-Agent and the crawler has one, a clone carrying it, so
// that the caller's request is never modified.
func outbound(ctx context.Context, req *http.Request, userAgent string) *http.Request {
	if _, ok := req.Header["User-Agent"]; ok || userAgent == "" {
		return req
	}
	out := req.Clone(ctx)
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	out.Header.Set("User-Agent", userAgent)
	return out
}
