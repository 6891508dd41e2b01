package robots

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// contractBase is a stub base RoundTripper: each host answers robots.txt
// and pages its own way. It counts CloseIdleConnections and closes the
// request bodies it receives, as a RoundTripper must.
type contractBase struct {
	idle atomic.Int64
	mu   sync.Mutex
	both []*trackedBody // the bodies returned with an error
}

// unclosed returns how many bodies returned with an error are not closed.
func (b *contractBase) unclosed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, body := range b.both {
		if !body.closed.Load() {
			n++
		}
	}
	return n
}

var errBase = errors.New("base: connection reset")

func (b *contractBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}
	host, _, _ := strings.Cut(r.URL.Hostname(), ".")
	if r.URL.Path == "/robots.txt" {
		switch host {
		case "unreachable":
			resp.StatusCode = 500
		default:
			resp.Body = io.NopCloser(strings.NewReader(privateRobots))
		}
		return resp, nil
	}
	switch host {
	case "redirect":
		resp.StatusCode = http.StatusFound
		resp.Header.Set("Location", "/elsewhere")
	case "broken":
		return nil, errBase
	case "both":
		body := newTrackedBody("")
		b.mu.Lock()
		b.both = append(b.both, body)
		b.mu.Unlock()
		resp.Body = body
		return resp, errBase
	}
	return resp, nil
}

func (b *contractBase) CloseIdleConnections() { b.idle.Add(1) }

// TestRoundTripperContract checks the http.RoundTripper contract on every
// path: the caller's request is never modified, its body always closed, a
// response or an error is returned but never both, redirects are not
// followed, and it is safe for concurrent use.
func TestRoundTripperContract(t *testing.T) {
	for _, tc := range []struct {
		name    string
		url     string
		timeout time.Duration // of the request's context; 0: none
		status  int           // expected response; 0: an error
		err     func(error) bool
	}{
		{name: "allowed", url: "http://allowed.example/page", status: 200},
		{name: "allowed redirect not followed", url: "http://redirect.example/page", status: http.StatusFound},
		{name: "refused by a rule", url: "http://allowed.example/private", err: isRule},
		{name: "robots fetch failed", url: "http://unreachable.example/page", err: isUnreachable},
		{name: "slot past deadline", url: "http://slow.example/page", timeout: 20 * time.Millisecond,
			err: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{name: "base error", url: "http://broken.example/page", err: is(errBase)},
		{name: "base returns both", url: "http://both.example/page", err: is(errBase)},
		{name: "no host", url: "http:///page", err: is(errNoHost)},
		{name: "not http", url: "ftp://allowed.example/private", status: 200},
		{name: "not http, base returns both", url: "ftp://both.example/page", err: is(errBase)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &contractBase{}
			c := newClock()
			opts := Options{UserAgent: "ExampleBot", Now: c.Now, MinDelay: -1}
			if tc.timeout > 0 {
				// A slot an hour away, waited for on a timer that only
				// the request's context ends.
				opts.MinDelay = time.Hour
				opts.Sleep = func(ctx context.Context, d time.Duration) error {
					<-ctx.Done()
					return ctx.Err()
				}
			}
			tr := NewTransport(base, opts)
			if tc.timeout > 0 {
				if _, err := get(t, tr, tc.url); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() { checkContract(t, tr, tc.url, tc.timeout, tc.status, tc.err) })
			}
			waitGroup(t, &wg, "every request of the contract check")
			// Checked once every request has returned: another's may still
			// be closing its own.
			if n := base.unclosed(); n > 0 {
				t.Errorf("%d bodies of responses returned with an error were not closed", n)
			}
			tr.CloseIdleConnections()
			if base.idle.Load() != 1 {
				t.Errorf("CloseIdleConnections reached the base %d times, want 1", base.idle.Load())
			}
		})
	}
}

func checkContract(t *testing.T, tr *Transport, url string, timeout time.Duration, status int, wantErr func(error) bool) {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	body := newTrackedBody("payload")
	req, err := http.NewRequestWithContext(ctx, "POST", url, body)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header.Set("X-Trace", "1")
	before := *req
	beforeURL := *req.URL
	beforeHeader := req.Header.Clone()

	resp, err := tr.RoundTrip(req)

	if (resp == nil) == (err == nil) {
		t.Errorf("RoundTrip returned response %v and error %v; want exactly one", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("status %d, want %d", resp.StatusCode, status)
		}
	}
	if err != nil && (wantErr == nil || !wantErr(err)) {
		t.Errorf("error %v not the one expected", err)
	}
	if !body.closed.Load() {
		t.Errorf("request body not closed")
	}
	if *req.URL != beforeURL || !reflect.DeepEqual(req.Header, beforeHeader) ||
		req.Method != before.Method || req.Host != before.Host || req.Body != before.Body || req.ContentLength != before.ContentLength {
		t.Errorf("the caller's request was modified")
	}
}

func is(target error) func(error) bool {
	return func(err error) bool { return err == target }
}

func isRule(err error) bool {
	var de *DisallowedError
	return errors.As(err, &de) && errors.Is(err, ErrDisallowed) && de.Rule != nil
}

func isUnreachable(err error) bool {
	var de *DisallowedError
	return errors.As(err, &de) && errors.Is(err, ErrDisallowed) && de.Unreachable
}
