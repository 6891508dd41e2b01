package frontier

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/crawlkit/robots"
)

// Stats is a snapshot of a Frontier's progress.
type Stats struct {
	// Queued, InFlight, Waiting, Done, Refused and Failed count the URLs
	// in each state now.
	Queued, InFlight, Waiting, Done, Refused, Failed int
	// Responses counts the outcomes given to Frontier.Done by the class of
	// their status, "1xx" to "5xx", or "error" when the request returned
	// an error (refusals and taken slots included).
	Responses map[string]int64
	// Retries counts the outcomes that sent a URL back to wait: a
	// retryable one with attempts left, a slot another fleet member took,
	// a worker stopping.
	Retries int64
	// RefusedByRule and RefusedByPreference count the refusals by a rule
	// of robots.txt and by the site's AI-use preferences.
	RefusedByRule, RefusedByPreference int64
	// PagesPerMinute is how many responses (outcomes without an error)
	// Done was given in the last minute.
	PagesPerMinute int64
}

// counters are what Stats reads besides the state counts; the
// Frontier's mu guards them.
type counters struct {
	responses      [6]int64 // 1xx to 5xx, then errors
	retries        int64
	byRule, byPref int64
	minute         [60]int64 // responses per second of the last minute
	minuteAt       [60]int64 // the Unix second each bucket counts
}

// outcome counts one outcome given to Done at now.
func (c *counters) outcome(now time.Time, resp *http.Response, err error, refused *robots.DisallowedError, st State, retry bool) {
	switch {
	case err != nil:
		c.responses[5]++
	default:
		c.responses[min(max(resp.StatusCode/100, 1), 5)-1]++
	}
	if retry {
		c.retries++
	}
	if st == Refused && refused != nil {
		if refused.Label != "" {
			c.byPref++
		} else {
			c.byRule++
		}
	}
	if err == nil {
		sec := now.Unix()
		i := sec % 60
		if c.minuteAt[i] != sec {
			c.minuteAt[i], c.minute[i] = sec, 0
		}
		c.minute[i]++
	}
}

// Stats returns a snapshot of f's progress.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statsLocked(f.opts.Now())
}

// statsLocked is Stats at now; f.mu is held.
func (f *Frontier) statsLocked(at time.Time) Stats {
	s := Stats{
		Queued: f.count[Queued], InFlight: f.count[InFlight], Waiting: f.count[Waiting],
		Done: f.count[Done], Refused: f.count[Refused], Failed: f.count[Failed],
		Responses: make(map[string]int64, 6),
		Retries:   f.stats.retries, RefusedByRule: f.stats.byRule, RefusedByPreference: f.stats.byPref,
	}
	for i, n := range f.stats.responses {
		if n == 0 {
			continue
		}
		class := "error"
		if i < 5 {
			class = string(rune('1'+i)) + "xx"
		}
		s.Responses[class] = n
	}
	now := at.Unix()
	for i, at := range f.stats.minuteAt {
		if at > now-60 && at <= now {
			s.PagesPerMinute += f.stats.minute[i]
		}
	}
	return s
}

// log writes s to logger as one Info line.
func (s *Stats) log(ctx context.Context, logger *slog.Logger) {
	logger.InfoContext(ctx, "frontier: progress",
		"queued", s.Queued, "in_flight", s.InFlight, "waiting", s.Waiting,
		"done", s.Done, "refused", s.Refused, "failed", s.Failed,
		"retries", s.Retries, "pages_per_minute", s.PagesPerMinute)
}
