package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/hashicorp/go-retryablehttp"
)

// testClient returns the demo's client over a transport on clk, and a
// count of the attempts the client makes.
func testClient(t *testing.T, clk *fakeclock.Clock, policy retryablehttp.CheckRetry) (*retryablehttp.Client, *atomic.Int32) {
	t.Helper()
	tr := robots.NewTransport(http.DefaultTransport, robots.Options{
		UserAgent: userAgent, Now: clk.Now, Sleep: clk.Sleep, MinDelay: -1,
	})
	t.Cleanup(tr.CloseIdleConnections)
	c := newClient(tr)
	c.CheckRetry = policy
	var attempts atomic.Int32
	c.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { attempts.Add(1) }
	return c, &attempts
}

// TestRefusalIsNotRetried checks that checkRetry stops at a refusal: one
// attempt, nothing sent to the site, the DisallowedError with its rule
// given back; while go-retryablehttp's default policy, the pitfall it
// mends, retries the refusal RetryMax times.
func TestRefusalIsNotRetried(t *testing.T) {
	var sent atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		sent.Add(1)
	}))
	t.Cleanup(site.Close)
	tests := []struct {
		name     string
		policy   retryablehttp.CheckRetry
		attempts int32
	}{
		{"checkRetry stops at once", checkRetry, 1},
		{"the default policy retries a refusal", retryablehttp.DefaultRetryPolicy, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, attempts := testClient(t, fakeclock.New(), tt.policy)
			resp, err := c.Get(site.URL + "/private/x")
			if resp != nil {
				resp.Body.Close()
				t.Fatalf("got a response, %s; want a refusal", resp.Status)
			}
			if got := attempts.Load(); got != tt.attempts {
				t.Errorf("%d attempts, want %d", got, tt.attempts)
			}
			var refused *robots.DisallowedError
			if !errors.As(err, &refused) || refused.Rule == nil || refused.Rule.Line != 2 {
				t.Errorf("error %v, want the DisallowedError of line 2", err)
			}
			if n := sent.Load(); n != 0 {
				t.Errorf("%d requests reached the site's pages, want none", n)
			}
		})
	}
}

// TestRealFailuresAreRetried checks that checkRetry keeps the default
// policy for what is not a refusal: a page answering 503 once is retried
// and fetched.
func TestRealFailuresAreRetried(t *testing.T) {
	var calls atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" && calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(site.Close)
	c, attempts := testClient(t, fakeclock.New(), checkRetry)
	resp, err := c.Get(site.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || attempts.Load() != 2 {
		t.Errorf("status %d after %d attempts, want 200 after 2", resp.StatusCode, attempts.Load())
	}
}

// TestDemo runs the demo on a fake clock: the refused URL is dropped and
// never sent, the flaky page is retried and fetched, and the URL of the
// site whose robots.txt answered 503 is requeued at its RetryAt, not
// retried, and fetched once robots.txt is back.
func TestDemo(t *testing.T) {
	clk := fakeclock.New()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // only a hang reaches it
	defer cancel()
	var out bytes.Buffer
	s, res, err := run(ctx, &out, clock{now: clk.Now, sleep: clk.Sleep})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	var got []string
	for _, o := range res {
		got = append(got, o.Result+" "+o.URL[strings.LastIndexByte(o.URL, '/'):])
	}
	want := []string{"fetched /", "dropped /report", "fetched /flaky", "requeued /today", "fetched /today"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("outcomes %q, want %q\n%s", got, want, out.String())
	}
	requeued, fetched := res[3], res[4]
	if requeued.Next.IsZero() || !fetched.At.Equal(requeued.Next) {
		t.Errorf("requeued for %v, tried again at %v; want it tried at its RetryAt", requeued.Next, fetched.At)
	}
	if got := requeued.Next.Sub(requeued.At); got != 2*time.Second {
		t.Errorf("RetryAt %v after the refusal, want the transport's MinBackoff, 2s", got)
	}
	if s.pages["shop/private/report"] != 0 || s.pages["shop/flaky"] != 2 || s.pages["news/today"] != 1 {
		t.Errorf("pages sent %v, want /private/report never, /flaky twice, /today once", s.pages)
	}
	if s.robots["news"] != 2 || s.robots["shop"] != 1 {
		t.Errorf("robots.txt fetched %v, want the news site's twice (503, then at RetryAt) and the shop's once", s.robots)
	}
	if !strings.Contains(out.String(), "requeued http://") || !strings.Contains(out.String(), "again at +2s") {
		t.Errorf("output:\n%s", out.String())
	}
}
