package robots

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// nopCache is an httpcache.Cache that keeps nothing, so that what a
// transport holds for its origins is measured alone.
type nopCache struct{}

func (nopCache) Get(string) ([]byte, bool) { return nil, false }
func (nopCache) Set(string, []byte)        {}
func (nopCache) Delete(string)             {}

// smallSize is the size of a common robots.txt.
const smallSize = 220

// smallRobots is a robots.txt of smallSize bytes for host, the size of a
// common one: a group of rules and a Sitemap line.
func smallRobots(host string) string {
	var b strings.Builder
	b.WriteString("User-agent: *\nCrawl-delay: 1\nSitemap: https://" + host + "/sitemap.xml\n")
	for i := 0; b.Len() < smallSize-24; i++ {
		fmt.Fprintf(&b, "Disallow: /private%d/\n", i)
	}
	b.WriteString("# ")
	b.WriteString(strings.Repeat("x", max(smallSize-b.Len()-1, 0)))
	b.WriteString("\n")
	return b.String()
}

// smallSite answers each host's robots.txt with smallRobots.
var smallSite = rtFunc(func(r *http.Request) (*http.Response, error) {
	body := smallRobots(r.URL.Host)
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(body)),
		Body: io.NopCloser(strings.NewReader(body))}, nil
})

// TestOriginWeightIsWhatItHolds checks that what the byte budget counts
// for an origin of a 220-byte robots.txt is what it holds on the heap,
// within a fifth either way: counted too high, the default budget keeps
// fewer origins than it can afford and the others are fetched and parsed
// again; too low, it holds more memory than it says.
func TestOriginWeightIsWhatItHolds(t *testing.T) {
	const origins = 20000
	c := newClock()
	tr := NewTransport(smallSite, Options{Cache: nopCache{}, MaxOrigins: origins, MaxRobotsBytes: 1 << 40, Now: c.Now, Sleep: c.Sleep})
	ctx := context.Background()
	before := liveHeap()
	for i := range origins {
		if err := tr.Check(ctx, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
			t.Fatal(err)
		}
	}
	grown := liveHeap() - before
	if n := tr.Stats().Origins; n != origins {
		t.Fatalf("%d origins held, want %d", n, origins)
	}
	runtime.KeepAlive(tr)
	perHeap := float64(grown) / origins
	t.Logf("an origin of a %d-byte robots.txt holds %.0f bytes of heap", len(smallRobots("host1.example")), perHeap)
	// A budget of held origins' heap: as many are held as it affords.
	const afford = 2000
	budgeted := NewTransport(smallSite, Options{Cache: nopCache{}, MaxOrigins: origins, MaxRobotsBytes: int64(afford * perHeap), Now: c.Now, Sleep: c.Sleep})
	for i := range 2 * afford {
		if err := budgeted.Check(ctx, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := budgeted.Stats().Origins; n > afford*6/5 || n < afford*4/5 {
		t.Errorf("a budget of %d origins' heap holds %d: each is weighed at %.0f bytes, holding %.0f; want within a fifth", afford, n, perHeap*afford/float64(n), perHeap)
	}
}

// TestDefaultBudgetHoldsSmallOrigins checks that the default
// MaxRobotsBytes holds 100,000 origins of a 220-byte robots.txt, every
// one: none is forgotten, to be fetched and parsed again on its next
// request.
func TestDefaultBudgetHoldsSmallOrigins(t *testing.T) {
	const origins = 100000
	c := newClock()
	tr := NewTransport(smallSite, Options{Cache: nopCache{}, MaxOrigins: origins, Now: c.Now, Sleep: c.Sleep})
	ctx := context.Background()
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < origins; i += workers {
				if err := tr.Check(ctx, fmt.Sprintf("http://host%d.example/page", i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	waitGroupWithin(t, &wg, 5*time.Minute, "every worker's checks")
	if n := tr.Stats().Origins; n != origins {
		t.Errorf("%d origins of a %d-byte robots.txt held in the default %d MiB; want all %d", n, smallSize, DefaultMaxRobotsBytes>>20, origins)
	}
}
