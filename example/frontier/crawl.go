package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/frontier"
)

// plan is one crawl of the demo sites: how many origins at which delay,
// how long each page takes, who crawls and how.
type plan struct {
	fast, slow int           // origins paced at fastDelay and at slowDelay
	fastDelay  time.Duration // Options.MinDelay: the fast origins have no Crawl-delay
	slowDelay  time.Duration // the slow origins' Crawl-delay
	page       time.Duration // how long a page takes to answer
	span       time.Duration // each origin gets the URLs it can be sent in this time
	workers    int
	pool       bool // a plain worker pool instead of the frontier
	shuffled   bool // URLs in random order rather than grouped by origin
	pause      bool // one fast origin answers one page with 503 and Retry-After: 1
	robotsDown bool // one fast origin answers its first robots.txt request with 503
	transports int  // transports crawling at once, sharing store; 1 if 0
	byOrigin   bool // the transports split the URLs by origin, not URL by URL
	store      robots.Fleet
}

// result is what a crawl achieved, measured at the sites.
type result struct {
	pages    int           // pages the sites served
	elapsed  time.Duration // from the first page served to the last
	ideal    time.Duration // the least time the politeness delays allow for those pages
	requeued int64         // URLs the frontiers sent back to wait
	waited   time.Duration // time the transports' requests waited for a slot
	outpaced int           // origins sent their pages faster than their delay allows
}

// share is the crawl's rate as a fraction of the politeness limit.
func (r result) share() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ideal) / float64(r.elapsed)
}

func (r result) String() string {
	return fmt.Sprintf("%d pages in %.2f s, %.1f%% of the politeness limit; %d requeued, %.2f s waited in RoundTrip",
		r.pages, r.elapsed.Seconds(), 100*r.share(), r.requeued, r.waited.Seconds())
}

// crawl runs p against sites it serves on loopback and measures it.
func crawl(ctx context.Context, p plan) (result, error) {
	sites, err := serve(p)
	if err != nil {
		return result{}, err
	}
	defer sites.close()

	urls := sites.urls(p)
	n := max(p.transports, 1)
	trs := make([]*robots.Transport, n)
	for i := range trs {
		opts := robots.Options{UserAgent: "FrontierDemo/1.0", MinDelay: p.fastDelay, MinBackoff: robotsRetry, Fleet: p.store}
		// Each transport its own connections, as separate processes have.
		trs[i] = robots.NewTransport(&http.Transport{MaxIdleConnsPerHost: 4}, opts)
	}
	var wg sync.WaitGroup
	var frontiers []*frontier.Frontier
	errs := make(chan error, n*p.workers)
	for i, tr := range trs {
		mine, err := share(tr, urls, i, n, p.byOrigin)
		if err != nil {
			return result{}, err
		}
		client := &http.Client{Transport: tr}
		if p.pool {
			work := make(chan string, len(mine))
			for _, u := range mine {
				work <- u
			}
			close(work)
			for range p.workers {
				wg.Go(func() {
					for u := range work {
						if err := get(ctx, client, u); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			continue
		}
		f := frontier.New(tr, frontier.Options{})
		frontiers = append(frontiers, f)
		for _, u := range mine {
			if _, err := f.Add(u); err != nil {
				return result{}, err
			}
		}
		for range p.workers {
			wg.Go(func() {
				if err := work(ctx, f, client); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	r := sites.measure()
	for _, f := range frontiers {
		st := f.Stats()
		r.requeued += st.Retries
		if st.Failed > 0 || st.Refused > 0 {
			return result{}, fmt.Errorf("%d URLs failed, %d refused", st.Failed, st.Refused)
		}
	}
	for _, tr := range trs {
		r.waited += tr.Stats().Waited
	}
	return r, nil
}

// share returns transport i's share of urls among n: with byOrigin, the
// URLs of the origins that hash to it (docs/fleet.md's split), else every
// n-th URL, so that every transport crawls every origin.
func share(tr *robots.Transport, urls []string, i, n int, byOrigin bool) ([]string, error) {
	var mine []string
	for j, raw := range urls {
		if !byOrigin {
			if j%n == i {
				mine = append(mine, raw)
			}
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		origin, err := tr.Origin(u)
		if err != nil {
			return nil, err
		}
		h := fnv.New32a()
		h.Write([]byte(origin))
		if int(h.Sum32()%uint32(n)) == i {
			mine = append(mine, raw)
		}
	}
	return mine, nil
}

// work is one frontier worker: it takes a free origin's URL, fetches it
// and gives it back, until none is left; the frontier retries what can
// be retried.
func work(ctx context.Context, f *frontier.Frontier, client *http.Client) error {
	for {
		l, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrEmpty) {
			return nil
		}
		if err != nil {
			return err
		}
		resp, err := fetch(l.Context(ctx), client, l.URL)
		f.Done(ctx, l, resp, err)
	}
}

// get fetches rawURL for the worker pool, which has nothing to retry
// with: an answer of 429 or 503, or a refusal while the robots.txt is
// unreachable, is fetched again, waiting inside RoundTrip for the pause
// it set or sleeping until the robots.txt's retry.
func get(ctx context.Context, client *http.Client, rawURL string) error {
	for {
		resp, err := fetch(ctx, client, rawURL)
		var refused *robots.DisallowedError
		if errors.As(err, &refused) && refused.Unreachable {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(refused.RetryAt)):
			}
			continue
		}
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			return nil
		}
	}
}

// robotsRetry is the transports' Options.MinBackoff: how long an origin
// whose robots.txt answered 503 is refused before it is fetched again.
const robotsRetry = time.Second

// fetch gets rawURL and reads its body whole.
func fetch(ctx context.Context, client *http.Client, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// sites are the demo's origins, each a server on its own loopback port
// that records when each page reached it.
type sites struct {
	servers []*http.Server
	origins []*site
}

// site is one origin.
type site struct {
	base  string
	delay time.Duration
	page  time.Duration
	// pauseAt is, for the origin that answers 503 once, the page that
	// gets it; 0 for none.
	pauseAt int
	// robotsDown: the first robots.txt request is answered 503.
	robotsDown bool

	// mu protects the fields below.
	mu         sync.Mutex
	arrivals   []time.Time
	paused     bool
	robotsSeen bool // a robots.txt request came
}

// serve starts p's origins.
func serve(p plan) (*sites, error) {
	s := &sites{}
	for i := range p.fast + p.slow {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.close()
			return nil, err
		}
		o := &site{base: "http://" + ln.Addr().String(), delay: p.fastDelay, page: p.page}
		if i >= p.fast {
			o.delay = p.slowDelay
		}
		if p.pause && i == 0 {
			o.pauseAt = o.pages(p) / 2
		}
		o.robotsDown = p.robotsDown && i == 1
		srv := &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		s.servers = append(s.servers, srv)
		s.origins = append(s.origins, o)
	}
	return s, nil
}

func (s *sites) close() {
	for _, srv := range s.servers {
		srv.Close()
	}
}

// pages is how many URLs the origin gets: as many as its delay lets it be
// sent in the plan's span.
func (o *site) pages(p plan) int {
	return max(int(p.span/o.delay), 1)
}

// urls lists every origin's URLs, grouped by origin or shuffled.
func (s *sites) urls(p plan) []string {
	var urls []string
	for _, o := range s.origins {
		for i := range o.pages(p) {
			urls = append(urls, o.base+"/page/"+strconv.Itoa(i))
		}
	}
	if p.shuffled {
		rand.Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
	}
	return urls
}

func (o *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		o.mu.Lock()
		down := o.robotsDown && !o.robotsSeen
		o.robotsSeen = true
		o.mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: %g\n", o.delay.Seconds())
		return
	}
	o.mu.Lock()
	o.arrivals = append(o.arrivals, time.Now())
	pause := o.pauseAt > 0 && !o.paused && len(o.arrivals) == o.pauseAt
	if pause {
		o.paused = true
	}
	o.mu.Unlock()
	time.Sleep(o.page)
	if pause {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "<html><body>a page</body></html>")
}

// measure reads what the sites saw: the pages, the time from the first
// to the last, and the least time the delays (and a pause) allow for them.
func (s *sites) measure() result {
	var r result
	var first, last time.Time
	for _, o := range s.origins {
		o.mu.Lock()
		a := slices.Clone(o.arrivals)
		o.mu.Unlock()
		if len(a) == 0 {
			continue
		}
		slices.SortFunc(a, func(x, y time.Time) int { return x.Compare(y) })
		r.pages += len(a)
		if first.IsZero() || a[0].Before(first) {
			first = a[0]
		}
		if a[len(a)-1].After(last) {
			last = a[len(a)-1]
		}
		ideal := time.Duration(len(a)-1) * o.delay
		if o.paused {
			// The 503's Retry-After holds the origin a second more than
			// its delay would.
			ideal += time.Second - o.delay
		}
		paced := ideal
		if o.robotsDown {
			// Its first page waits for the robots.txt's retry.
			ideal += robotsRetry
		}
		r.ideal = max(r.ideal, ideal)
		// Read over the whole crawl, not pair by pair: arrivals at the
		// server carry the senders' scheduling, which on a loaded machine
		// brings two pages sent a delay apart closer, but never a crawl
		// that keeps the pace a quarter under the time its delays take. A
		// frontier that ignored the fleet's slots (each transport alone)
		// would take half.
		if span := a[len(a)-1].Sub(a[0]); span < paced*3/4 {
			r.outpaced++
		}
	}
	r.elapsed = last.Sub(first)
	return r
}
