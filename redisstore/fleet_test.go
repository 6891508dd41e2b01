package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// A Store wrapped to watch its slots is still a robots.Fleet.
var _ robots.Fleet = loggingStore{}

const siteRobots = "User-agent: *\nDisallow: /private\n"

// site is one origin of a fleet test: it serves siteRobots (or the status
// it is told), counts robots.txt requests, and records when each other
// request arrived.
type site struct {
	srv    *httptest.Server
	robots atomic.Int64
	// status is the status robots.txt is answered with.
	status atomic.Int64
	// gate, when set before the first request, holds every page request
	// until it is closed; held counts the requests it holds or held.
	gate chan struct{}
	held atomic.Int64

	// mu protects arrivals.
	mu       sync.Mutex
	arrivals []time.Time
	paths    []string
}

func newSite(t *testing.T) *site {
	s := &site{}
	s.status.Store(http.StatusOK)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.robots.Add(1)
			w.WriteHeader(int(s.status.Load()))
			io.WriteString(w, siteRobots)
			return
		}
		s.mu.Lock()
		s.arrivals = append(s.arrivals, time.Now())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		if s.gate != nil {
			s.held.Add(1)
			<-s.gate
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// newSites returns n sites.
func newSites(t *testing.T, n int) []*site {
	sites := make([]*site, n)
	for i := range sites {
		sites[i] = newSite(t)
	}
	return sites
}

func (s *site) pages() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// member is one transport of a fleet, as a separate process would have it:
// its own Redis client and Store, its own connections.
type member struct {
	store  *redisstore.Store
	client *http.Client
}

// waitCeiling bounds every wait of these tests, a request included:
// generous, so that only a defect, never a loaded machine, reaches it.
const waitCeiling = time.Minute

// eventually polls cond until it holds, failing t with what it waited for
// once waitCeiling has passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitCeiling)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting, after %v, for %s", waitCeiling, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// healthyTimeout is the store Timeout of tests in which Redis does not
// fail: a generous ceiling, so that a loaded test machine is not taken for
// a Redis outage (which makes a transport fetch on its own).
const healthyTimeout = 10 * time.Second

// recoveryTimeout is the store Timeout of tests in which Redis fails and
// comes back. Their failures are refused dials and closed connections,
// found at once whatever the Timeout; a short one would also fail a call
// that a loaded test machine merely slowed, after the recovery, and
// have its member pace alone, out of step with the others, which is the
// design for a store that does not answer, not a fault of the recovery.
const recoveryTimeout = 2 * time.Second

// newMember returns a transport with opts whose Fleet is a Store on addr.
func newMember(t testing.TB, addr string, opts robots.Options, sopts redisstore.Options) *member {
	return newMemberLogging(t, addr, opts, sopts, nil)
}

// newMemberLogging is newMember whose Store records the slots it grants
// in slots, when slots is not nil.
func newMemberLogging(t testing.TB, addr string, opts robots.Options, sopts redisstore.Options, slots *slotLog) *member {
	// A thousand requests at once queue for the pool's connections; the
	// store's Timeout, through the context, bounds that wait, not
	// go-redis's own few seconds, which a loaded machine exceeds.
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, PoolTimeout: time.Minute})
	base := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() { rc.Close(); base.CloseIdleConnections() })
	m := &member{store: redisstore.New(rc, sopts)}
	opts.Fleet = m.store
	if slots != nil {
		opts.Fleet = loggingStore{Store: m.store, log: slots}
	}
	m.client = &http.Client{Transport: robots.NewTransport(base, opts)}
	return m
}

// get requests url and returns what the crawler saw: "sent" or "refused",
// or the error when neither.
func (m *member) get(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := m.client.Do(req)
	switch {
	case errors.Is(err, robots.ErrDisallowed):
		return "refused"
	case err != nil:
		return err.Error()
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	return "sent"
}

// want is the decision siteRobots makes on path.
func want(path string) string {
	if strings.HasPrefix(path, "/private") {
		return "refused"
	}
	return "sent"
}

// crawl has every member request each path of every site at once, n
// requests per member, and reports each decision that differs from
// siteRobots's.
func crawl(t *testing.T, members []*member, sites []*site, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, m := range members {
		for i := range n {
			wg.Go(func() {
				path := fmt.Sprintf("/page/%d", i)
				if i%5 == 0 {
					path = fmt.Sprintf("/private/%d", i)
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitCeiling)
				defer cancel()
				if got := m.get(ctx, sites[i%len(sites)].srv.URL+path); got != want(path) {
					t.Errorf("GET %s: %s; want %s", path, got, want(path))
				}
			})
		}
	}
	wg.Wait()
}

// TestFleetFetchesOncePerOrigin: 8 transports x 1,000 concurrent requests
// to 20 cold origins make exactly one robots.txt request per origin.
func TestFleetFetchesOncePerOrigin(t *testing.T) {
	srv := redistest.Start(t)
	sites := newSites(t, 20)
	members := make([]*member, 8)
	for i := range members {
		members[i] = newMember(t, srv.Addr, robots.Options{MinDelay: -1}, redisstore.Options{Timeout: healthyTimeout})
	}
	crawl(t, members, sites, 1000)
	for i, s := range sites {
		if n := s.robots.Load(); n != 1 {
			t.Errorf("site %d: robots.txt requested %d times; want 1", i, n)
		}
	}
	for i, m := range members {
		if st := m.store.Stats(); st.Errors != 0 {
			t.Errorf("member %d: store stats %+v; want no error", i, st)
		}
	}
}

// TestFleetOutageCarriesOver: an outage recorded by one transport refuses
// requests in another, which fetches nothing, and the outage's 30-day clock
// runs from the fleet's first failure, not from each transport's own.
func TestFleetOutageCarriesOver(t *testing.T) {
	srv := redistest.Start(t)
	s := newSite(t)
	clock := fakeclock.New()
	// Every transport is a process that starts late, knowing nothing but
	// what the fleet stored; they share one clock, as synchronised hosts.
	fresh := func() *member {
		return newMember(t, srv.Addr, robots.Options{MinDelay: -1, Now: clock.Now, Sleep: clock.Sleep}, redisstore.Options{})
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitCeiling)
	defer cancel()
	steps := []struct {
		name    string
		advance time.Duration
		status  int
		fetches int64 // robots.txt requests so far
		public  string
		private string
	}{
		{"a good copy", 0, http.StatusOK, 1, "sent", "refused"},
		{"the outage starts, once the copy is stale", 25 * time.Hour, http.StatusServiceUnavailable, 2, "refused", "refused"},
		{"another transport refuses without a fetch", time.Second, http.StatusServiceUnavailable, 2, "refused", "refused"},
		{"20 days on, still refused", 20 * 24 * time.Hour, http.StatusServiceUnavailable, 3, "refused", "refused"},
		{"30 days after the fleet's first failure, the last good copy", 10*24*time.Hour + time.Hour, http.StatusServiceUnavailable, 4, "sent", "refused"},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		s.status.Store(int64(st.status))
		m := fresh()
		public, private := m.get(ctx, s.srv.URL+"/page"), m.get(ctx, s.srv.URL+"/private/x")
		if public != st.public || private != st.private || s.robots.Load() != st.fetches {
			t.Fatalf("%s: /page %s, /private %s, %d robots.txt requests; want %s, %s, %d",
				st.name, public, private, s.robots.Load(), st.public, st.private, st.fetches)
		}
	}
}

// TestFleetLeaseholderReplaced: a process that took the fetch lease and
// never answers holds the others back only until the lease expires; then
// one of them fetches.
func TestFleetLeaseholderReplaced(t *testing.T) {
	srv := redistest.Start(t)
	s := newSite(t)
	holder := newMember(t, srv.Addr, robots.Options{}, redisstore.Options{})
	const leaseTTL = 300 * time.Millisecond
	// httptest's URL, "http://127.0.0.1:port", is already the origin key.
	held, err := holder.store.Lease(context.Background(), robots.OriginKey(s.srv.URL), "a process that died", leaseTTL)
	if err != nil || !held {
		t.Fatalf("Lease = %v, %v", held, err)
	}
	start := time.Now()
	const fetchTimeout = 20 * time.Second
	members := make([]*member, 4)
	for i := range members {
		members[i] = newMember(t, srv.Addr, robots.Options{MinDelay: -1, FetchTimeout: fetchTimeout}, redisstore.Options{Timeout: healthyTimeout})
	}
	crawl(t, members, []*site{s}, 20)
	elapsed := time.Since(start)
	if n := s.robots.Load(); n != 1 {
		t.Errorf("robots.txt requested %d times; want 1, after the lease expired", n)
	}
	// Before the lease expired nobody fetched; the fetch came when it
	// did, long before the waiters' own FetchTimeout ran out.
	if elapsed < leaseTTL || elapsed > fetchTimeout/2 {
		t.Errorf("crawl took %v; want between the lease's %v and well under FetchTimeout %v", elapsed, leaseTTL, fetchTimeout)
	}
}

// TestFleetRedisStops stops redis-server in the middle of a crawl, while
// requests are in flight (held at the sites until it is down): every
// request still gets the decision robots.txt makes, nothing panics, the
// members' store calls fail meanwhile, and once redis-server is back the
// fleet shares again.
func TestFleetRedisStops(t *testing.T) {
	srv := redistest.Start(t)
	sites := newSites(t, 10)
	gate := make(chan struct{})
	for _, s := range sites[:5] {
		s.gate = gate
	}
	members := make([]*member, 4)
	for i := range members {
		// A stopped Redis refuses connections at once; a short Timeout
		// would only take a loaded machine for an outage.
		members[i] = newMember(t, srv.Addr, robots.Options{MinDelay: -1},
			redisstore.Options{Timeout: healthyTimeout, Cooldown: -1})
	}
	held := func() (n int64) {
		for _, s := range sites[:5] {
			n += s.held.Load()
		}
		return n
	}
	var wg sync.WaitGroup
	wg.Go(func() { crawl(t, members, sites[:5], 400) })
	// The sites hold the requests that reach them until redis-server is
	// down, so the crawl is still running when it stops.
	eventually(t, "requests to reach the sites", func() bool { return held() >= 10 })
	srv.Stop()
	close(gate)
	// Keep crawling origins nobody has seen while it is down.
	crawl(t, members, sites[5:], 400)
	wg.Wait()
	var errs int64
	for _, m := range members {
		errs += m.store.Stats().Errors
	}
	if errs == 0 {
		t.Error("no store call failed while redis-server was down")
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		awaitRedis(t, m.store)
	}
	cold := newSite(t)
	crawl(t, members, []*site{cold}, 200)
	if n := cold.robots.Load(); n != 1 {
		t.Errorf("after the restart: robots.txt of a cold origin requested %d times; want 1", n)
	}
}

// awaitRedis waits until s reaches Redis again: a client whose dials
// failed retries them in the background, about once a second.
func awaitRedis(t *testing.T, s *redisstore.Store) {
	t.Helper()
	eventually(t, "Redis to answer after its restart", func() bool {
		_, err := s.Lease(context.Background(), "probe", "probe", time.Millisecond)
		return err == nil
	})
}

// Environment of a worker process of TestFleetProcesses.
const (
	workerRedisEnv = "REDISSTORE_WORKER_REDIS"
	workerSitesEnv = "REDISSTORE_WORKER_SITES"
)

// TestFleetProcesses runs the fleet as separate OS processes (this test
// binary re-executed as TestFleetWorker), all crawling the same cold
// origins at once: each origin's robots.txt is requested once.
func TestFleetProcesses(t *testing.T) {
	srv := redistest.Start(t)
	sites := newSites(t, 10)
	urls := make([]string, len(sites))
	for i, s := range sites {
		urls[i] = s.srv.URL
	}
	const workers = 4
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 5*waitCeiling)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), workerRedisEnv+"="+srv.Addr, workerSitesEnv+"="+strings.Join(urls, " "))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("worker %d: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	pages := 0
	for i, s := range sites {
		if n := s.robots.Load(); n != 1 {
			t.Errorf("site %d: robots.txt requested %d times by %d processes; want 1", i, n, workers)
		}
		pages += len(s.pages())
	}
	// crawl refuses every fifth of its 200 requests.
	if want := workers * 200 * 4 / 5; pages != want {
		t.Errorf("%d pages requested; want the %d allowed", pages, want)
	}
}

// TestFleetWorker is one process of TestFleetProcesses; run by itself it
// has nothing to do.
func TestFleetWorker(t *testing.T) {
	addr := os.Getenv(workerRedisEnv)
	if addr == "" {
		t.Skip("a worker process of TestFleetProcesses")
	}
	var sites []*site
	for _, u := range strings.Fields(os.Getenv(workerSitesEnv)) {
		sites = append(sites, &site{srv: &httptest.Server{URL: u}})
	}
	m := newMember(t, addr, robots.Options{MinDelay: -1}, redisstore.Options{Timeout: healthyTimeout})
	crawl(t, []*member{m}, sites, 200)
	if st := m.store.Stats(); st.Errors != 0 {
		t.Errorf("store stats %+v; want no error", st)
	}
}

// TestFleetPacing: 4 transports crawling one origin at once keep one pace:
// the fleet grants send times at least MinDelay apart, and no request
// reaches the origin's server before its own.
func TestFleetPacing(t *testing.T) {
	srv := redistest.Start(t)
	s := newSite(t)
	const minDelay = 100 * time.Millisecond
	var slots slotLog
	members := make([]*member, 4)
	for i := range members {
		members[i] = newMemberLogging(t, srv.Addr, robots.Options{MinDelay: minDelay}, redisstore.Options{Timeout: healthyTimeout}, &slots)
	}
	crawl(t, members, []*site{s}, 5)
	pages := s.pages()
	// crawl refuses one request in five, before it takes a slot.
	granted := slots.sorted()
	if len(pages) != 4*4 || len(granted) != len(pages) {
		t.Fatalf("%d pages requested on %d slots; want 16 on 16", len(pages), len(granted))
	}
	for i := 1; i < len(granted); i++ {
		if gap := granted[i].Sub(granted[i-1]); gap < minDelay {
			t.Errorf("slots %d and %d are %v apart; want at least MinDelay %v", i-1, i, gap, minDelay)
		}
	}
	// Each request arrives after its own slot, so the k-th arrival comes
	// after the k-th slot: arrivals keep the fleet's pace, whatever
	// scheduling delays bring two of them closer than the slots are.
	slices.SortFunc(pages, time.Time.Compare)
	for k := range pages {
		if pages[k].Before(granted[k]) {
			t.Errorf("request %d arrived at %v, before slot %d at %v", k, pages[k], k, granted[k])
		}
	}
}

// slotLog records the send times a fleet granted, from every member.
type slotLog struct {
	mu    sync.Mutex
	slots []time.Time
	ends  []time.Time // each slot plus its spread
}

func (l *slotLog) sorted() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.SortedFunc(slices.Values(l.slots), time.Time.Compare)
}

// loggingStore is a Store that records the slots it grants in log; the
// other capabilities the transport looks for are the Store's own.
type loggingStore struct {
	*redisstore.Store
	log *slotLog
}

func (s loggingStore) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	slot, err := s.Store.ReserveSlot(ctx, origin, req)
	if slot.Reserved && err == nil {
		s.log.mu.Lock()
		s.log.slots = append(s.log.slots, slot.At)
		s.log.ends = append(s.log.ends, slot.At.Add(req.Spread))
		s.log.mu.Unlock()
	}
	return slot, err
}

// CancelSlot forgets the slot given back, which lasted until at: a slot
// whose answer came too late to use is given back and not sent in.
func (s loggingStore) CancelSlot(ctx context.Context, origin robots.OriginKey, at time.Time, interval time.Duration) error {
	s.log.mu.Lock()
	if i := slices.IndexFunc(s.log.ends, at.Equal); i >= 0 {
		s.log.slots = slices.Delete(s.log.slots, i, i+1)
		s.log.ends = slices.Delete(s.log.ends, i, i+1)
	}
	s.log.mu.Unlock()
	return s.Store.CancelSlot(ctx, origin, at, interval)
}

// pacedMember is one process of a pacing test: one worker sending its
// requests in turn, on a fake clock of its own that only its waits move,
// so that the time a request leaves at, read from that clock, is exactly
// the slot it was given, shared or its own.
type pacedMember struct {
	clock   *fakeclock.Clock
	store   *redisstore.Store
	tr      *robots.Transport
	granted atomic.Int64 // slots the store granted
	// told is how many members the store counted in its last answer to
	// a reservation: what the member paces by if Redis goes now.
	told atomic.Int64

	mu    sync.Mutex
	sends []pacedSend
}

// pacedSend is one request a pacedMember sent.
type pacedSend struct {
	at     time.Time // on the member's clock
	shared bool      // the slot came from the store
}

func newPacedMember(t *testing.T, addr string, delay time.Duration, gate *slotGate) *pacedMember {
	// No retries: a call to a stopped Redis fails at once.
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rc.Close() })
	m := &pacedMember{clock: fakeclock.New()}
	m.store = redisstore.New(rc, redisstore.Options{Timeout: healthyTimeout, Cooldown: -1})
	m.tr = robots.NewTransport(m, robots.Options{
		UserAgent: "ExampleBot",
		MinDelay:  delay,
		// A member that fails fast runs its clock days ahead; a renewal
		// between a slot and its send would move the send off the slot.
		Freshness: 100 * 365 * 24 * time.Hour,
		Fleet:     countingStore{Store: m.store, granted: &m.granted, told: &m.told, gate: gate},
		Now:       m.clock.Now,
		Sleep:     m.clock.Sleep,
	})
	return m
}

// RoundTrip is the member's base: robots.txt allows everything, and every
// other request is recorded at the member's time.
func (m *pacedMember) RoundTrip(r *http.Request) (*http.Response, error) {
	body := "User-agent: *\nAllow: /\n"
	if r.URL.Path != "/robots.txt" {
		m.mu.Lock()
		m.sends = append(m.sends, pacedSend{at: m.clock.Now()})
		m.mu.Unlock()
		body = "page"
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// run sends requests to url one after another until ctx ends.
func (m *pacedMember) run(ctx context.Context, t *testing.T, url string) {
	for i := 0; ctx.Err() == nil; i++ {
		granted := m.granted.Load()
		// The members' fake clocks drift apart by days (one paced alone
		// tens of thousands of times in a slow machine's outage runs
		// ahead, 3 s of its clock a request), so a slot may lie days away
		// on another's: the deadline is far, but there is one, and ctx
		// ends every request when the test stops.
		rctx, cancel := context.WithTimeout(ctx, 365*24*time.Hour)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, fmt.Sprintf("%s/%d", url, i), nil)
		resp, err := m.tr.RoundTrip(req)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("request %d: %v", i, err)
			}
			return
		}
		resp.Body.Close()
		m.mu.Lock()
		m.sends[len(m.sends)-1].shared = m.granted.Load() > granted
		m.mu.Unlock()
	}
}

// sent returns the requests sent so far.
func (m *pacedMember) sent() []pacedSend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sends)
}

// count returns how many of the requests sent from index from on were
// paced by the store (shared) or by the member alone.
func (m *pacedMember) count(from int, shared bool) int {
	n := 0
	for _, s := range m.sent()[min(from, len(m.sent())):] {
		if s.shared == shared {
			n++
		}
	}
	return n
}

// countingStore is a Store that counts the slots it grants, keeps the
// member count of its last answer, and holds each reservation at its gate
// while the gate is closed.
type countingStore struct {
	*redisstore.Store
	granted *atomic.Int64
	told    *atomic.Int64
	gate    *slotGate
}

func (s countingStore) ReserveSlot(ctx context.Context, origin robots.OriginKey, req robots.SlotRequest) (robots.Slot, error) {
	s.gate.pass(ctx)
	slot, err := s.Store.ReserveSlot(ctx, origin, req)
	if err == nil {
		s.told.Store(int64(slot.Members))
		if slot.Reserved {
			s.granted.Add(1)
		}
	}
	return slot, err
}

// slotGate holds the reservations of a fleet's members while it is
// closed, so that a test can stop or restart Redis between two of them:
// when every member is held, no answer comes to any until it opens. It is
// safe for concurrent use.
type slotGate struct {
	// mu protects closed and held.
	mu sync.Mutex
	// closed is nil while the gate is open, and closed when it opens.
	closed chan struct{}
	held   int
}

// pass returns when the gate is open, or ctx ends.
func (g *slotGate) pass(ctx context.Context) {
	g.mu.Lock()
	closed := g.closed
	if closed == nil {
		g.mu.Unlock()
		return
	}
	g.held++
	g.mu.Unlock()
	select {
	case <-closed:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.held--
	g.mu.Unlock()
}

// hold closes the gate and waits until n reservations are held at it.
func (g *slotGate) hold(t *testing.T, n int, what string) {
	t.Helper()
	g.mu.Lock()
	if g.closed == nil {
		g.closed = make(chan struct{})
	}
	g.mu.Unlock()
	eventually(t, fmt.Sprintf("%d reservations to be held %s", n, what), func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.held == n
	})
}

// open lets every reservation held, and every later one, through.
func (g *slotGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
}

// TestFleetPacingThroughOutage runs 3 members on one origin, each sending
// one request after another, and kills redis-server mid-crawl, then
// starts it again empty. Each member keeps at least the delay between its
// own requests throughout; while Redis is down, each paces at the delay
// times the 3 members it last saw, so that the fleet as a whole stays
// within the delay; once Redis is back and empty, no member sends sooner
// than its own last send plus the delay, and with no Cooldown the fleet's
// shared slots are at least the delay apart from the first. Times are the
// slots themselves, read from each member's fake clock.
//
// Redis stops while every member's reservation is held, once each was
// last told of all 3 members: the fake clocks drift apart (one member
// waiting for a CPU stays at its time while the others take dozens of
// slots in a millisecond), and a member whose last slot lies more than
// the member window behind another's clock is, by the contract, no
// longer counted by it. Held again for the restart, the members' sends
// before it are told apart exactly from the ones after.
func TestFleetPacingThroughOutage(t *testing.T) {
	srv := redistest.Start(t)
	const (
		delay   = time.Second
		members = 3
		url     = "http://fleet.example"
	)
	gate := &slotGate{}
	fleet := make([]*pacedMember, members)
	for i := range fleet {
		fleet[i] = newPacedMember(t, srv.Addr, delay, gate)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, m := range fleet {
		wg.Go(func() { m.run(ctx, t, url) })
	}
	t.Cleanup(func() { stop(); gate.open(); wg.Wait() })
	each := func(what string, from []int, shared bool) {
		t.Helper()
		eventually(t, fmt.Sprintf("each member to send 3 requests %s", what), func() bool {
			for i, m := range fleet {
				if m.count(from[i], shared) < 3 {
					return false
				}
			}
			return true
		})
	}
	marks := func() []int {
		n := make([]int, members)
		for i, m := range fleet {
			n[i] = len(m.sent())
		}
		return n
	}
	each("on shared slots", make([]int, members), true)
	eventually(t, "every member to be told of all 3 in its last reservation", func() bool {
		gate.hold(t, members, "before Redis stops")
		for _, m := range fleet {
			if m.told.Load() != members {
				gate.open()
				return false
			}
		}
		return true
	})
	srv.Stop()
	gate.open()
	each("paced alone while Redis is down", marks(), false)
	gate.hold(t, members, "before Redis restarts")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	back := marks()
	gate.open()
	each("on shared slots again, Redis back and empty", back, true)
	stop()
	wg.Wait()

	var alone, sharedAfter []time.Time
	for i, m := range fleet {
		sends := m.sent()
		for k := 1; k < len(sends); k++ {
			gap := sends[k].at.Sub(sends[k-1].at)
			if gap < delay {
				t.Errorf("member %d: requests %d (shared %v) and %d (shared %v) %v apart; want at least the delay %v",
					i, k-1, sends[k-1].shared, k, sends[k].shared, gap, delay)
			}
			// Until the restart; after it, a member's calls may fail for
			// a second more (go-redis dials again in the background once
			// PoolSize dials failed), and it then paces by the members it
			// saw since, still no sooner than the delay.
			if !sends[k].shared && k < back[i] && gap < members*delay {
				t.Errorf("member %d: request %d, paced alone, %v after the one before; want at least %d members x %v",
					i, k, gap, members, delay)
			}
		}
		for k, s := range sends {
			switch {
			case !s.shared && k < back[i]:
				alone = append(alone, s.at)
			case s.shared && k >= back[i]:
				sharedAfter = append(sharedAfter, s.at)
			}
		}
		t.Logf("member %d: %d requests, %d shared before the outage, %d paced alone, %d shared after",
			i, len(sends), m.count(0, true)-m.count(back[i], true), m.count(0, false), m.count(back[i], true))
	}
	slices.SortFunc(alone, time.Time.Compare)
	if span := alone[len(alone)-1].Sub(alone[0]); len(alone) > int(span/delay)+members {
		t.Errorf("while Redis was down the fleet sent %d requests in %v; want at most one a delay (%v), one more per member",
			len(alone), span, delay)
	}
	slices.SortFunc(sharedAfter, time.Time.Compare)
	for k := 1; k < len(sharedAfter); k++ {
		if gap := sharedAfter[k].Sub(sharedAfter[k-1]); gap < delay {
			t.Errorf("after Redis came back, shared slots %d and %d are %v apart; want at least the delay %v", k-1, k, gap, delay)
		}
	}
}

// TestFleetUnpacedHonoursStoredPause: in a fleet that does not space its
// requests (MinDelay < 0, no Crawl-delay), a Retry-After one member was
// given pauses the origin for every other member, which already knew the
// origin and had seen no pause: a request that cannot wait that long fails
// fast, unsent, and one that can waits for the pause's end.
func TestFleetUnpacedHonoursStoredPause(t *testing.T) {
	srv := redistest.Start(t)
	var pages atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/busy":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			pages.Add(1)
		}
	}))
	t.Cleanup(site.Close)
	clock := fakeclock.New()
	opts := robots.Options{MinDelay: -1, Now: clock.Now, Sleep: clock.Sleep}
	a := newMember(t, srv.Addr, opts, redisstore.Options{Timeout: healthyTimeout})
	b := newMember(t, srv.Addr, opts, redisstore.Options{Timeout: healthyTimeout})
	// Every request has a deadline: a pacing defect fails the test
	// instead of hanging it.
	bg, cancelAll := context.WithTimeout(context.Background(), waitCeiling)
	defer cancelAll()
	if got := b.get(bg, site.URL+"/page"); got != "sent" {
		t.Fatalf("b's first request: %s", got)
	}
	if got := a.get(bg, site.URL+"/busy"); got != "429 Too Many Requests" {
		t.Fatalf("a's request for /busy: %s", got)
	}
	short, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	if got := b.get(short, site.URL+"/page"); !strings.Contains(got, "past the request's deadline") {
		t.Errorf("b's request with a minute left during the pause: %s; want it to fail fast", got)
	}
	// This one waits out the hour's pause on the fake clock: its deadline
	// is real time, and lies past it.
	long, cancelLong := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancelLong()
	if got := b.get(long, site.URL+"/page"); got != "sent" {
		t.Fatalf("b's request after the pause: %s", got)
	}
	if w := clock.Waits(); !slices.Equal(w, []time.Duration{time.Hour}) {
		t.Errorf("waits %v; want [1h], the pause a stored", w)
	}
	if n := pages.Load(); n != 2 {
		t.Errorf("%d pages served; want 2, none during the pause", n)
	}
}
