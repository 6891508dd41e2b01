// Package sendlog records when a transport hands each request to its
// base, per origin, for tests of pacing: the time a site's pace is judged
// by, after every wait and every line of the transport's own code, and
// before a dial or the site's own scheduling adds delays of its own.
package sendlog

import (
	"net/http"
	"slices"
	"sync"
	"time"
)

// Log is a base RoundTripper that records when each request other than a
// robots.txt fetch reached it, by host, and passes it on to Next
// (http.DefaultTransport if nil).
type Log struct {
	Next http.RoundTripper

	// mu protects sends.
	mu    sync.Mutex
	sends map[string][]time.Time
}

// RoundTrip records r's time and sends it through Next.
func (l *Log) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/robots.txt" {
		now := time.Now()
		l.mu.Lock()
		if l.sends == nil {
			l.sends = make(map[string][]time.Time)
		}
		l.sends[r.URL.Host] = append(l.sends[r.URL.Host], now)
		l.mu.Unlock()
	}
	next := l.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Sends returns the times recorded so far, by host, each in order.
func (l *Log) Sends() map[string][]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]time.Time, len(l.sends))
	for host, ts := range l.sends {
		out[host] = slices.SortedFunc(slices.Values(ts), time.Time.Compare)
	}
	return out
}
