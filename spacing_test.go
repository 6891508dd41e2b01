package robots_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/cpuload"
	"github.com/crawlkit/robots/internal/sendlog"
)

// gapStats is what the sends to each origin, in order, say of the least
// spacing.
type gapStats struct {
	sends, gaps, under int
	least              time.Duration
	leastOrigin        string
}

// gaps measures the gaps between consecutive sends to each origin that
// l recorded against floor.
func gaps(l *sendlog.Log, floor time.Duration) gapStats {
	st := gapStats{least: time.Duration(1<<63 - 1)}
	for origin, ts := range l.Sends() {
		st.sends += len(ts)
		for k := 1; k < len(ts); k++ {
			g := ts[k].Sub(ts[k-1])
			st.gaps++
			if g < floor {
				st.under++
			}
			if g < st.least {
				st.least, st.leastOrigin = g, origin
			}
		}
	}
	return st
}

// notFoundSite returns a server whose robots.txt is a 404 (all allowed)
// and whose pages answer 200.
func notFoundSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// spacingCeiling bounds every request of these tests: only a hang
// reaches it, never a loaded machine.
const spacingCeiling = time.Minute

// TestSpacingFromRealSends: MinDelay is the least time between two
// requests to an origin as they leave for the network, measured at the
// base RoundTripper, on the real clock, with goroutines queued for the
// origin and the CPU busy, so that sleepers wake late. A sender woken
// late must push the next one back; one followed on its schedule is not
// MinDelay after it. A millisecond is allowed for the clock reads.
func TestSpacingFromRealSends(t *testing.T) {
	const delay = 100 * time.Millisecond
	tests := []struct {
		name                    string
		origins, workers, sends int
	}{
		{"one origin, 16 workers", 1, 16, 4},
		{"50 origins, 32 workers", 50, 32, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sites := make([]*httptest.Server, tt.origins)
			for i := range sites {
				sites[i] = notFoundSite(t)
			}
			base := &sendlog.Log{Next: &http.Transport{MaxIdleConnsPerHost: 64}}
			tr := robots.NewTransport(base, robots.Options{UserAgent: "SpacingBot", MinDelay: delay})
			t.Cleanup(tr.CloseIdleConnections)
			cpuload.Spin(t, 8)
			start := time.Now()
			var wg sync.WaitGroup
			for w := range tt.workers {
				wg.Go(func() {
					for i := range tt.sends {
						site := sites[(w*tt.sends+i)%len(sites)]
						ctx, cancel := context.WithTimeout(context.Background(), spacingCeiling)
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/w%d/%d", site.URL, w, i), nil)
						resp, err := tr.RoundTrip(req)
						if err != nil {
							t.Errorf("GET %s: %v", req.URL, err)
						} else {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						cancel()
					}
				})
			}
			wg.Wait()
			floor := delay - time.Millisecond
			st := gaps(base, floor)
			if want := tt.workers * tt.sends; st.sends != want {
				t.Errorf("%d requests reached the base; want %d", st.sends, want)
			}
			if st.under > 0 {
				t.Errorf("%d of %d gaps between consecutive sends to an origin under %v; the least %v (%s)",
					st.under, st.gaps, floor, st.least, st.leastOrigin)
			}
			t.Logf("%d sends to %d origins in %v; least gap %v, %d of %d under %v",
				st.sends, tt.origins, time.Since(start).Round(time.Millisecond), st.least, st.under, st.gaps, floor)
		})
	}
}
