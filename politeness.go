package robots

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/time/rate"

	"github.com/crawlkit/robots/policy"
)

// delayFor returns the least time between two requests to an origin whose
// robots.txt holds the crawler to agent: Options.MinDelay, raised by the
// Crawl-delay of the crawler's groups up to Options.MaxCrawlDelay.
// Crawl-delay is not part of RFC 9309; it paces requests and never decides
// them.
func (t *Transport) delayFor(agent policy.Agent) time.Duration {
	d := t.cfg.minDelay
	if t.cfg.maxCrawlDelay > 0 {
		if cd, ok := agent.CrawlDelay(); ok {
			d = max(d, min(cd, t.cfg.maxCrawlDelay))
		}
	}
	return d
}

// wait holds a request to o until its politeness slot: no sooner than delay
// after the origin's previous request and not before a pause that a
// Retry-After asked for. The slot is taken from a rate.Limiter at the
// injected clock's time and the wait itself is Options.Sleep, so a test
// drives both without real time passing. When ctx ends first the slot is
// given back and ctx.Err() returned. now is the time of the request.
func (t *Transport) wait(ctx context.Context, o *origin, delay time.Duration, now time.Time) error {
	paused := o.paused()
	if delay <= 0 && !paused.After(now) {
		// Nothing to space requests by: no slot to take, no lock.
		return nil
	}
	o.mu.Lock()
	switch {
	case o.lim == nil:
		o.lim = rate.NewLimiter(rate.Every(delay), 1)
		o.delay = delay
	case delay != o.delay:
		o.lim.SetLimitAt(now, rate.Every(delay))
		o.delay = delay
	}
	at := now
	if paused.After(at) {
		at = paused
	}
	r := o.lim.ReserveN(at, 1)
	// The limiter counts tokens in floating point, which leaves delays a
	// nanosecond off (2.999999999s for 3s); no timer is that precise.
	d := (at.Sub(now) + r.DelayFrom(at)).Round(time.Millisecond)
	o.mu.Unlock()
	if d <= 0 {
		return nil
	}
	if err := t.cfg.sleep(ctx, d); err != nil {
		r.CancelAt(t.cfg.now())
		t.stats.waited.Add(int64(min(max(t.cfg.now().Sub(now), 0), d)))
		return err
	}
	t.stats.waited.Add(int64(d))
	return nil
}

// pause stops requests to o for as long as a 429 or 503 response's
// Retry-After asks (RFC 9110 section 10.2.3), at most Options.MaxBackoff.
func (t *Transport) pause(o *origin, resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	now := t.cfg.now()
	d := min(retryAfter(resp.Header, now), t.cfg.maxBackoff)
	if d <= 0 {
		return
	}
	until := now.Add(d)
	for {
		// Only ever extend a pause: the latest Retry-After does not
		// shorten one that an earlier response asked for.
		cur := o.pausedUntil.Load()
		if until.UnixNano() <= cur || o.pausedUntil.CompareAndSwap(cur, until.UnixNano()) {
			break
		}
	}
	safeLog(t.cfg.logger, slog.LevelInfo, "robots: origin paused", "origin", o.key, "status", resp.StatusCode, "until", until)
}
