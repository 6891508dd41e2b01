package robots

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/robots/policy"
)

// delayFor returns the least time between two requests to an origin whose
// robots.txt holds the crawler to agent: Options.MinDelay, raised by the
// Crawl-delay of the crawler's groups up to Options.MaxCrawlDelay.
// Crawl-delay is not part of RFC 9309; it paces requests and never decides
// them.
func (t *Transport) delayFor(agent policy.Agent) time.Duration {
	d := t.minDelay
	if t.maxCrawlDelay > 0 {
		if cd, ok := agent.CrawlDelay(); ok {
			d = max(d, min(cd, t.maxCrawlDelay))
		}
	}
	return d
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
		n, err := strconv.ParseUint(v, 10, 63)
		switch {
		case err == nil && n <= uint64((1<<63-1)/time.Second):
			return time.Duration(n) * time.Second
		case err == nil || isDigits(v):
			return time.Duration(1<<63 - 1)
		}
		return 0
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return max(at.Sub(now), 0)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sleep waits for d or until ctx is done, on a real timer: the default
// Options.Sleep.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
