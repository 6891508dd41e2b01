package pgstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
	"github.com/crawlkit/robots/internal/pgtest"
	"github.com/crawlkit/robots/internal/sendlog"
	"github.com/crawlkit/robots/pgstore"
)

// openStore returns a Store on url under schema, its pool closed when t
// ends.
func openStore(t testing.TB, url, schema string, opts pgstore.Options) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 32
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opts.Schema = schema
	return pgstore.New(pool, opts), pool
}

func TestFleetConformance(t *testing.T) {
	srv := pgtest.Start(t)
	var n atomic.Int64
	fleettest.Run(t, func(t *testing.T) robots.Fleet {
		s, _ := openStore(t, srv.URL, fmt.Sprintf("case%d", n.Add(1)), pgstore.Options{Timeout: 10 * time.Second})
		return s
	})
}

// site is an origin that records when each page arrives.
type site struct {
	srv    *httptest.Server
	robots atomic.Int64
	mu     sync.Mutex
	pages  []time.Time
}

func newSite(t testing.TB) *site {
	s := &site{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.robots.Add(1)
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		s.mu.Lock()
		s.pages = append(s.pages, time.Now())
		s.mu.Unlock()
		io.WriteString(w, "page")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.SortedFunc(slices.Values(s.pages), time.Time.Compare)
}

// crawl has workers request pages through tr until ctx ends.
func crawl(ctx context.Context, wg *sync.WaitGroup, tr http.RoundTripper, base string, workers int) {
	client := &http.Client{Transport: tr}
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				rctx, cancel := context.WithTimeout(ctx, time.Minute)
				req, _ := http.NewRequestWithContext(rctx, http.MethodGet, fmt.Sprintf("%s/w%d/%d", base, w, i), nil)
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				} else {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}
		})
	}
}

// TestFleetSurvivesLosingItsState: 3 members crawl through one
// PostgreSQL, their queued workers holding slots ahead, one origin or
// 40 of them; the store then loses state: its tables truncated, as a
// restore from an old backup leaves them, or the server killed and
// started again on its data. From Cooldown plus one delay after it, no
// two requests to an origin are handed to the members' bases closer than
// 0.9 of the delay (a sender descheduled between the pacer's last clock
// read and the base has the rest; a slot the lost state hands out twice
// falls far short), whichever members sent them, and the fleet keeps
// sending. The sites' own arrivals, a dial and a handler's scheduling
// later, vary by more on a loaded machine: they are logged.
func TestFleetSurvivesLosingItsState(t *testing.T) {
	const (
		delay    = 500 * time.Millisecond
		cooldown = 300 * time.Millisecond
	)
	for _, tt := range []struct {
		name             string
		origins, workers int // per member
		restart          bool
	}{
		{"truncated, one origin", 1, 4, false},
		{"truncated, 40 origins", 40, 2, false},
		{"restarted, one origin", 1, 4, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := pgtest.Start(t)
			sites := make([]*site, tt.origins)
			for i := range sites {
				sites[i] = newSite(t)
			}
			var pool *pgxpool.Pool
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			sent := &sendlog.Log{}
			for range 3 {
				store, p := openStore(t, srv.URL, "fleet", pgstore.Options{Timeout: 2 * time.Second, Cooldown: cooldown})
				pool = p
				tr := robots.NewTransport(sent, robots.Options{UserAgent: "ExampleBot", MinDelay: delay, Fleet: store})
				for _, s := range sites {
					crawl(ctx, &wg, tr, s.srv.URL, tt.workers)
				}
			}
			t.Cleanup(func() { stop(); wg.Wait() })
			deadline := time.Now().Add(time.Minute)
			for len(sites[0].arrivals()) < 6 {
				if time.Now().After(deadline) {
					t.Fatal("the fleet sent fewer than 6 requests to an origin in a minute")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tt.restart {
				srv.Stop()
				time.Sleep(2 * delay)
				if err := srv.Restart(); err != nil {
					t.Fatal(err)
				}
			} else if _, err := pool.Exec(context.Background(), `TRUNCATE fleet.records, fleet.leases, fleet.paces, fleet.budgets, fleet.budget_urls`); err != nil {
				t.Fatal(err)
			}
			lost := time.Now()
			time.Sleep(cooldown + delay + 10*delay)
			stop()
			wg.Wait()
			settled := lost.Add(cooldown + delay)
			floor := delay * 9 / 10
			after := 0
			arrived := time.Duration(1<<63 - 1)
			sends := sent.Sends()
			for i, s := range sites {
				pages := sends[strings.TrimPrefix(s.srv.URL, "http://")]
				for k := 1; k < len(pages); k++ {
					if pages[k-1].Before(settled) {
						continue
					}
					after++
					if gap := pages[k].Sub(pages[k-1]); gap < floor {
						t.Errorf("origin %d: requests %v and %v after the loss were sent %v apart; want at least %v",
							i, pages[k-1].Sub(lost).Round(time.Millisecond), pages[k].Sub(lost).Round(time.Millisecond), gap, floor)
					}
				}
				pages = s.arrivals()
				for k := 1; k < len(pages); k++ {
					if !pages[k-1].Before(settled) {
						arrived = min(arrived, pages[k].Sub(pages[k-1]))
					}
				}
			}
			if after < 5*tt.origins {
				t.Errorf("%d requests to %d origins in the %v after the fleet settled; want it to keep sending, near one a delay each", after, tt.origins, 10*delay)
			}
			t.Logf("%d requests to %d origins after the fleet settled; the least gap between two arrivals at a site %v", after, tt.origins, arrived)
		})
	}
}

// Environment of a worker process of TestFleetProcesses.
const (
	workerURLEnv  = "PGSTORE_WORKER_URL"
	workerSiteEnv = "PGSTORE_WORKER_SITE"
)

const processDelay = 200 * time.Millisecond

// TestFleetProcesses runs 3 OS processes (this test binary re-executed
// as TestFleetWorker), each of 4 workers, sharing one origin's pace
// through one PostgreSQL: no two requests reach the site closer than 0.9
// of the delay, and its robots.txt is fetched once.
func TestFleetProcesses(t *testing.T) {
	srv := pgtest.Start(t)
	s := newSite(t)
	// The schema is made once, before the processes race to use it.
	store, _ := openStore(t, srv.URL, "procs", pgstore.Options{})
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), workerURLEnv+"="+srv.URL, workerSiteEnv+"="+s.srv.URL)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("process %d: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	pages := s.arrivals()
	if len(pages) != 3*4*3 {
		t.Errorf("%d pages arrived; want 36", len(pages))
	}
	for k := 1; k < len(pages); k++ {
		if gap := pages[k].Sub(pages[k-1]); gap < processDelay*9/10 {
			t.Errorf("requests %d and %d reached the site %v apart; want at least %v", k-1, k, gap, processDelay*9/10)
		}
	}
	if n := s.robots.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by 3 processes; want once", n)
	}
}

// TestFleetWorker is one process of TestFleetProcesses; run by itself it
// has nothing to do.
func TestFleetWorker(t *testing.T) {
	url, base := os.Getenv(workerURLEnv), os.Getenv(workerSiteEnv)
	if url == "" {
		t.Skip("a worker process of TestFleetProcesses")
	}
	store, _ := openStore(t, url, "procs", pgstore.Options{Timeout: 5 * time.Second})
	client := &http.Client{Transport: robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot", MinDelay: processDelay, Fleet: store})}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 3 {
				resp, err := client.Get(base + "/p" + strconv.Itoa(os.Getpid()) + "/" + strconv.Itoa(w) + "/" + strconv.Itoa(i))
				if err != nil {
					t.Errorf("request: %v", err)
					continue
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if st := store.Stats(); st.Errors != 0 {
		t.Errorf("store stats %+v; want no error", st)
	}
}

// TestOutageFailsFastThenRecovers: with the server down a call fails
// with ErrUnavailable, the next ones within Cooldown are skipped without
// trying (robots.ErrStoreSkipped), and once the server is back (its data
// kept, as after a crash) the store answers again with what it held.
func TestOutageFailsFastThenRecovers(t *testing.T) {
	srv := pgtest.Start(t)
	const cooldown = 300 * time.Millisecond
	store, _ := openStore(t, srv.URL, "outage", pgstore.Options{Timeout: 2 * time.Second, Cooldown: cooldown})
	ctx := context.Background()
	key := robots.RecordKey{Origin: "https://site.example"}
	if ok, err := store.Swap(ctx, key, nil, []byte("v1")); !ok || err != nil {
		t.Fatalf("Swap = %v, %v", ok, err)
	}
	srv.Stop()
	if _, _, err := store.Load(ctx, key); !errors.Is(err, pgstore.ErrUnavailable) || !errors.Is(err, robots.ErrStoreFailed) || errors.Is(err, robots.ErrStoreSkipped) {
		t.Errorf("Load with the server down = %v; want ErrUnavailable and robots.ErrStoreFailed, tried", err)
	}
	if _, _, err := store.Load(ctx, key); !errors.Is(err, robots.ErrStoreSkipped) || !errors.Is(err, robots.ErrStoreFailed) {
		t.Errorf("Load within the cooldown = %v; want ErrStoreSkipped, marked counted (ErrStoreFailed)", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		v, found, err := store.Load(ctx, key)
		if err == nil {
			if !found || string(v) != "v1" {
				t.Errorf("after the restart Load = %q, %v; want the record kept", v, found)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not answer within a minute of the restart: %v", err)
		}
		time.Sleep(cooldown)
	}
}

// TestDroppedSchemaIsMadeAgain: a schema dropped under a running store
// (an empty restart, a restore from a backup older than it) is a store
// that lost its state, not a failure: the next call makes it again and
// answers, counting no error and starting no cooldown.
func TestDroppedSchemaIsMadeAgain(t *testing.T) {
	srv := pgtest.Start(t)
	// The schema whole, or one table of it, its mark left.
	for i, drop := range []string{`DROP SCHEMA dropped0 CASCADE`, `DROP TABLE dropped1.records`} {
		schema := fmt.Sprintf("dropped%d", i)
		store, pool := openStore(t, srv.URL, schema, pgstore.Options{Timeout: 5 * time.Second, Cooldown: time.Hour})
		ctx := context.Background()
		key := robots.RecordKey{Origin: "https://site.example"}
		if _, err := store.Swap(ctx, key, nil, []byte("v1")); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, drop); err != nil {
			t.Fatal(err)
		}
		if _, found, err := store.Load(ctx, key); found || err != nil {
			t.Fatalf("%s: Load = found %v, %v; want the schema made again and no record", drop, found, err)
		}
		if ok, err := store.Swap(ctx, key, nil, []byte("v2")); !ok || err != nil {
			t.Errorf("%s: Swap after the schema was made again = %v, %v; want the record stored", drop, ok, err)
		}
		if st := store.Stats(); st.Errors != 0 || st.Fallbacks != 0 {
			t.Errorf("%s: Stats = %+v; want no error and no fallback", drop, st)
		}
	}
}

// TestDroppedSchemaMadeAgainByMembersAtOnce: members that meet a dropped
// schema at once, each on its own pool whose connections used it before,
// all make it again and answer, counting no error: making it is safe from
// any number of processes.
func TestDroppedSchemaMadeAgainByMembersAtOnce(t *testing.T) {
	srv := pgtest.Start(t)
	// Every call, and so every wait on the members, ends within a minute.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stores []*pgstore.Store
	var pool *pgxpool.Pool
	for range 3 {
		s, p := openStore(t, srv.URL, "shared", pgstore.Options{Timeout: 10 * time.Second, Cooldown: time.Hour})
		stores, pool = append(stores, s), p
	}
	origin := robots.OriginKey("https://site.example")
	reserve := func(s *pgstore.Store) error {
		_, err := s.ReserveSlot(ctx, origin, robots.SlotRequest{Member: "m", Now: time.Now(), Interval: time.Millisecond})
		return err
	}
	for round := range 10 {
		var wg sync.WaitGroup
		for _, s := range stores {
			for range 4 {
				wg.Go(func() { reserve(s) })
			}
		}
		wg.Wait()
		if _, err := pool.Exec(ctx, `DROP SCHEMA shared CASCADE`); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 4*len(stores))
		for _, s := range stores {
			for range 4 {
				wg.Go(func() { errs <- reserve(s) })
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: a reservation on the dropped schema = %v; want it made again and no error", round, err)
			}
		}
	}
	for i, s := range stores {
		if st := s.Stats(); st.Errors != 0 {
			t.Errorf("store %d: Stats = %+v; want no error", i, st)
		}
	}
}

// TestFirstCallWaitsForTheSchemaPastItsTimeout: a store's first call
// makes the schema, waiting on another process making it (its advisory
// lock held here), longer than a call's Timeout: the call answers once
// the schema is made, with no error and no cooldown, so that a fleet
// starting together does not pace alone.
func TestFirstCallWaitsForTheSchemaPastItsTimeout(t *testing.T) {
	srv := pgtest.Start(t)
	const timeout = 200 * time.Millisecond
	store, pool := openStore(t, srv.URL, "slowmade", pgstore.Options{Timeout: timeout, Cooldown: time.Hour})
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const lock = `hashtext('pgstore "slowmade"')`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lock+`)`); err != nil {
		t.Fatal(err)
	}
	// The lock is let go from another goroutine, on conn, which is
	// released only once that is done.
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(3 * timeout)
		conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lock+`)`)
	}()
	defer func() {
		select {
		case <-unlocked:
		case <-time.After(time.Minute):
			t.Error("the advisory lock not let go within a minute")
		}
	}()
	if _, found, err := store.Load(ctx, robots.RecordKey{Origin: "https://site.example"}); found || err != nil {
		t.Fatalf("the first Load while another process makes the schema = found %v, %v; want no record, no error", found, err)
	}
	if st := store.Stats(); st.Errors != 0 || st.Fallbacks != 0 {
		t.Errorf("Stats = %+v; want no error and no fallback", st)
	}
	// A caller whose deadline passes while the schema is made is the
	// caller's, no failure.
	other, _ := openStore(t, srv.URL, "slowmade2", pgstore.Options{Timeout: timeout, Cooldown: time.Hour})
	conn2, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Release()
	if _, err := conn2.Exec(ctx, `SELECT pg_advisory_lock(hashtext('pgstore "slowmade2"'))`); err != nil {
		t.Fatal(err)
	}
	defer conn2.Exec(ctx, `SELECT pg_advisory_unlock(hashtext('pgstore "slowmade2"'))`)
	short, cancel := context.WithTimeout(ctx, timeout/2)
	defer cancel()
	began := time.Now()
	if _, _, err := other.Load(short, robots.RecordKey{Origin: "https://site.example"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Load past its caller's deadline while the schema is made = %v; want its context's error", err)
	}
	// A ceiling that only a call held to the migration's own bound
	// (pgstore.MigrateTimeout) passes.
	if took := time.Since(began); took > pgstore.MigrateTimeout/3 {
		t.Errorf("Load past its caller's deadline of %v returned after %v; want at its deadline", timeout/2, took)
	}
	if st := other.Stats(); st.Errors != 0 {
		t.Errorf("Stats = %+v; want no error", st)
	}
}

// TestLedgerTakesLongURLs: a paid URL as long as URLs get (past what an
// index row holds) is reserved, paid and given back like any, and two
// long URLs that differ only at their end are two URLs, with no error.
func TestLedgerTakesLongURLs(t *testing.T) {
	srv := pgtest.Start(t)
	store, _ := openStore(t, srv.URL, "longurls", pgstore.Options{})
	ctx := context.Background()
	// Random text, which PostgreSQL cannot compress below an index row's
	// limit.
	var q strings.Builder
	for q.Len() < 8000 {
		q.WriteString(rand.Text())
	}
	long := "https://site.example/search?q=" + q.String()
	const crawl, limit = "crawl USD", 100
	for i, step := range []struct {
		url        string
		paid, kept bool
	}{
		{long + "1", false, true},
		{long + "1", true, false}, // being paid
		{long + "2", false, true},
	} {
		r, err := store.Reserve(ctx, crawl, step.url, 10, limit)
		if err != nil || r.Paid != step.paid || r.Reserved != step.kept {
			t.Fatalf("step %d: Reserve = %+v, %v; want paid %v, reserved %v", i, r, err, step.paid, step.kept)
		}
	}
	if err := store.Settle(ctx, crawl, long+"1", 10, 10); err != nil {
		t.Fatal(err)
	}
	if err := store.Release(ctx, crawl, long+"2", 10); err != nil {
		t.Fatal(err)
	}
	if r, err := store.Reserve(ctx, crawl, long+"2", 10, limit); err != nil || !r.Reserved || r.Left != limit-20 {
		t.Errorf("Reserve of a URL given back = %+v, %v; want reserved, %d left", r, err, limit-20)
	}
	if st := store.Stats(); st.Errors != 0 {
		t.Errorf("Stats = %+v; want no error", st)
	}
}

// TestCallerGivingUpIsNotAFailure: a call whose caller's context ends
// while PostgreSQL holds it (its deadline passes, or it is cancelled) is
// the caller's: it is not counted, and it starts no cooldown, so that
// the next request is served by the store; a call that outlasts the
// store's own Timeout still is a failure, and the cooldown follows it.
func TestCallerGivingUpIsNotAFailure(t *testing.T) {
	srv := pgtest.Start(t)
	const timeout = 2 * time.Second
	store, pool := openStore(t, srv.URL, "gaveup", pgstore.Options{Timeout: timeout, Cooldown: time.Hour})
	bg := context.Background()
	origin := robots.OriginKey("https://site.example")
	req := func() robots.SlotRequest {
		return robots.SlotRequest{Member: "a", Now: time.Now(), Interval: time.Millisecond}
	}
	if _, err := store.ReserveSlot(bg, origin, req()); err != nil {
		t.Fatal(err)
	}
	// A transaction holding the pace table makes every slot call wait.
	tx, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg)
	if _, err := tx.Exec(bg, `LOCK TABLE gaveup.paces IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	deadline, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if _, err := store.ReserveSlot(deadline, origin, req()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ReserveSlot past the caller's deadline = %v; want its context's error", err)
	}
	cancelled, stop := context.WithCancel(bg)
	time.AfterFunc(100*time.Millisecond, stop)
	if _, err := store.ReserveSlot(cancelled, origin, req()); !errors.Is(err, context.Canceled) {
		t.Errorf("ReserveSlot cancelled by its caller = %v; want context.Canceled", err)
	}
	if _, err := store.ReserveSlot(cancelled, origin, req()); !errors.Is(err, context.Canceled) {
		t.Errorf("ReserveSlot of a caller already gone = %v; want context.Canceled", err)
	}
	if st := store.Stats(); st.Errors != 0 || st.Fallbacks != 0 {
		t.Errorf("Stats after the callers gave up = %+v; want no error and no fallback", st)
	}
	// The store's own Timeout passing is a failure, and starts the
	// cooldown.
	if _, err := store.ReserveSlot(bg, origin, req()); !errors.Is(err, pgstore.ErrUnavailable) || errors.Is(err, robots.ErrStoreSkipped) {
		t.Errorf("ReserveSlot past the store's Timeout = %v; want ErrUnavailable, tried", err)
	}
	if err := tx.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ReserveSlot(bg, origin, req()); !errors.Is(err, robots.ErrStoreSkipped) {
		t.Errorf("ReserveSlot within the cooldown = %v; want ErrStoreSkipped", err)
	}
	if st := store.Stats(); st.Errors != 1 || st.Fallbacks != 2 {
		t.Errorf("Stats = %+v; want 1 error (the Timeout) and 2 fallbacks (it and the call skipped)", st)
	}
}

// TestBudgetBookExpiresWhole: a crawl's book past its TTL is gone whole,
// as a Redis hash is: its URLs are no longer paid, a Settle or Release on
// it starts a new book rather than adding to the old spending, and the
// sweep takes the URLs with the book.
func TestBudgetBookExpiresWhole(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := t.Context()
	store, pool := openStore(t, srv.URL, "expiry", pgstore.Options{Timeout: 10 * time.Second})
	expire := func() {
		t.Helper()
		if _, err := pool.Exec(ctx, `UPDATE expiry.budgets SET expires = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
	}
	const crawl, limit = "c USD", 100
	if r, err := store.Reserve(ctx, crawl, "a", 10, limit); err != nil || !r.Reserved {
		t.Fatalf("Reserve a = %+v, %v", r, err)
	}
	if err := store.Settle(ctx, crawl, "a", 10, 10); err != nil {
		t.Fatal(err)
	}
	if err := store.Settle(ctx, crawl, "b", 0, 50); err != nil {
		t.Fatal(err)
	}
	expire()
	if r, err := store.Reserve(ctx, crawl, "a", 10, limit); err != nil || !r.Reserved || r.Paid || r.Left != 90 {
		t.Errorf("Reserve a in a new book = %+v, %v; want it reserved, 90 left", r, err)
	}
	expire()
	if err := store.Settle(ctx, crawl, "z", 0, 5); err != nil {
		t.Fatal(err)
	}
	if r, err := store.Reserve(ctx, crawl, "y", 10, limit); err != nil || !r.Reserved || r.Left != 85 {
		t.Errorf("Reserve y after a Settle on an expired book = %+v, %v; want 85 left: the old spending gone", r, err)
	}
	expire()
	if err := store.Release(ctx, crawl, "y", 10); err != nil {
		t.Fatal(err)
	}
	if r, err := store.Reserve(ctx, crawl, "z", 10, limit); err != nil || !r.Reserved || r.Left != 90 {
		t.Errorf("Reserve z after a Release on an expired book = %+v, %v; want it reserved, 90 left", r, err)
	}
	expire()
	// A new Store sweeps on its first call.
	fresh, _ := openStore(t, srv.URL, "expiry", pgstore.Options{Timeout: 10 * time.Second})
	if _, _, err := fresh.Load(ctx, robots.RecordKey{Origin: "http://x.example"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM expiry.budget_urls`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d URLs of an expired book left after the sweep", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCrawlerWithoutCreateRights: a crawler's role that may use the
// store's schema but not create or replace anything in it works once
// Migrate was run by a role that may: its Store runs no DDL.
func TestCrawlerWithoutCreateRights(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := t.Context()
	owner, pool := openStore(t, srv.URL, "shared", pgstore.Options{Timeout: 10 * time.Second})
	if err := owner.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE ROLE crawler LOGIN`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA shared TO crawler`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA shared TO crawler`,
		`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA shared TO crawler`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	crawler, _ := openStore(t, strings.Replace(srv.URL, "robots@", "crawler@", 1), "shared", pgstore.Options{Timeout: 10 * time.Second})
	key := robots.RecordKey{Origin: "http://site.example"}
	if ok, err := crawler.Swap(ctx, key, nil, []byte("record")); err != nil || !ok {
		t.Fatalf("Swap as the crawler = %v, %v", ok, err)
	}
	if slot, err := crawler.ReserveSlot(ctx, "http://site.example", robots.SlotRequest{Now: time.Now(), Interval: time.Second, Member: "m", Epoch: "e"}); err != nil || !slot.Reserved {
		t.Fatalf("ReserveSlot as the crawler = %+v, %v", slot, err)
	}
	if r, err := crawler.Reserve(ctx, "c USD", "http://site.example/a", 10, 100); err != nil || !r.Reserved {
		t.Fatalf("Reserve as the crawler = %+v, %v", r, err)
	}
	if st := crawler.Stats(); st.Errors != 0 {
		t.Errorf("the crawler's Store counted %d errors; want none", st.Errors)
	}
}

// TestMigrateInASchemaItDoesNotOwn: a role that may create in a schema a
// DBA made, without owning it, migrates it and uses it.
func TestMigrateInASchemaItDoesNotOwn(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := t.Context()
	_, admin := openStore(t, srv.URL, "unused", pgstore.Options{})
	for _, q := range []string{
		`CREATE ROLE migrator LOGIN`,
		`CREATE SCHEMA dba`,
		`GRANT USAGE, CREATE ON SCHEMA dba TO migrator`,
		`GRANT CREATE ON DATABASE postgres TO migrator`, // CREATE SCHEMA IF NOT EXISTS asks it
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	store, _ := openStore(t, strings.Replace(srv.URL, "robots@", "migrator@", 1), "dba", pgstore.Options{Timeout: 10 * time.Second})
	if err := store.Migrate(ctx); err != nil {
		t.Fatalf("Migrate in a schema it does not own: %v", err)
	}
	if ok, err := store.Swap(ctx, robots.RecordKey{Origin: "http://site.example"}, nil, []byte("v")); err != nil || !ok {
		t.Errorf("Swap = %v, %v", ok, err)
	}
}
