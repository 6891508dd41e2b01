package otelrobots_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/frontier"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/otelrobots"
	"github.com/crawlkit/robots/redisstore"
)

// waitCeiling bounds every wait of these tests; it only matters when
// something is wrong.
const waitCeiling = 10 * time.Second

// scrape is one scrape of the Prometheus exporter: each series'
// value by its name and labels as the exposition writes them, and each
// metric's type by its name.
type scrape struct {
	values map[string]float64
	types  map[string]string
}

// expect reports each series of want whose value in s is not the one
// given, or that s lacks.
func (s scrape) expect(t *testing.T, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if v, ok := s.values[series]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, w)
		}
	}
}

// prometheusServer returns a MeterProvider whose reader is the
// OpenTelemetry Prometheus exporter, and a function that scrapes it over
// HTTP as Prometheus would.
func prometheusServer(t *testing.T) (*sdkmetric.MeterProvider, func() scrape) {
	t.Helper()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		t.Fatal(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	srv := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return provider, func() scrape {
		t.Helper()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		s := scrape{values: map[string]float64{}, types: map[string]string{}}
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			line := lines.Text()
			if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
				s.types[f[2]] = f[3]
				continue
			}
			if strings.HasPrefix(line, "#") || line == "" {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				t.Fatalf("scrape line %q: %v", line, err)
			}
			s.values[line[:i]] = v
		}
		return s
	}
}

// held is a Sleep that advances the clock only when the test releases it.
type held struct {
	clock   *fakeclock.Clock
	release chan struct{}
}

func (h held) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-h.release:
		h.clock.Advance(d)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestScrape checks that a crawl's counts reach Prometheus by the names,
// types, units and attributes the package documents: fetches by outcome
// and status class, decisions by result and reason, the request waiting
// for its slot while it waits, the time it waited, and the origins held.
func TestScrape(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\nContent-Usage: /ai/ train-ai=n\n")
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(site.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)

	provider, scrapeNow := prometheusServer(t)
	clock := fakeclock.New()
	h := held{clock: clock, release: make(chan struct{})}
	tr := robots.NewTransport(nil, robots.Options{
		UserAgent: "ExampleBot/1.0", MinDelay: time.Second, Purposes: []string{"train-ai"},
		Now: clock.Now, Sleep: h.sleep,
	})
	if _, err := otelrobots.Register(tr, provider); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	for _, u := range []string{site.URL + "/", site.URL + "/private", site.URL + "/private/2", site.URL + "/ai/x", down.URL + "/a"} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
		} else if !errors.Is(err, robots.ErrDisallowed) {
			t.Fatal(err)
		}
	}
	// The site's robots.txt, asked for as a page, waits a second for its
	// slot and is counted apart from pages.
	done := make(chan error, 1)
	go func() {
		resp, err := client.Get(site.URL + "/robots.txt")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	deadline := time.Now().Add(waitCeiling)
	for scrapeNow().values["robots_requests_waiting"] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the scrape never showed the request waiting for its slot")
		}
		time.Sleep(time.Millisecond)
	}
	close(h.release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitCeiling):
		t.Fatal("the waiting request was never sent")
	}

	got := scrapeNow()
	got.expect(t, map[string]float64{
		`robots_txt_fetches_total{robots_outcome="parsed"}`:                             1,
		`robots_txt_fetches_total{robots_outcome="unreachable"}`:                        1,
		`robots_txt_fetches_total{robots_outcome="unavailable"}`:                        0,
		`robots_txt_responses_total{robots_status_class="2xx"}`:                         1,
		`robots_txt_responses_total{robots_status_class="5xx"}`:                         1,
		`robots_txt_revalidations_total`:                                                0,
		`robots_txt_fetch_duration_seconds_count{robots_outcome="parsed"}`:              1,
		`robots_txt_fetch_duration_seconds_count{robots_outcome="unreachable"}`:         1,
		`robots_decisions_total{robots_decision="allowed"}`:                             1,
		`robots_decisions_total{robots_decision="refused",robots_reason="rule"}`:        2,
		`robots_decisions_total{robots_decision="refused",robots_reason="unreachable"}`: 1,
		`robots_decisions_total{robots_decision="refused",robots_reason="preference"}`:  1,
		`robots_requests_sent_total{robots_target="page"}`:                              1,
		`robots_requests_sent_total{robots_target="robots.txt"}`:                        1,
		`robots_responses_total{robots_status_class="2xx"}`:                             2,
		`robots_wait_duration_seconds_count`:                                            2,
		`robots_wait_duration_seconds_sum`:                                              1,
		`robots_wait_duration_seconds_bucket{le="0.01"}`:                                1,
		`robots_wait_duration_seconds_bucket{le="1"}`:                                   2,
		`robots_requests_waiting`:                                                       0,
		`robots_origins`:                                                                2,
		`robots_origins_unreachable`:                                                    1,
		`robots_fleet_errors_total`:                                                     0,
		`robots_fleet_members`:                                                          0,
	})
	for name, typ := range map[string]string{
		"robots_txt_fetches_total": "counter", "robots_decisions_total": "counter",
		"robots_wait_duration_seconds": "histogram", "robots_txt_fetch_duration_seconds": "histogram",
		"robots_requests_waiting": "gauge", "robots_origins": "gauge", "robots_fleet_members": "gauge",
	} {
		base := strings.TrimSuffix(name, "_total")
		if got.types[name] != typ && got.types[base] != typ {
			t.Errorf("%s has type %q, want %s", name, got.types[base]+got.types[name], typ)
		}
	}
	for series := range got.values {
		if strings.Contains(series, "127.0.0.1") {
			t.Errorf("series %s has an origin for a label", series)
		}
	}
	if _, ok := got.values["robots_redisstore_calls_total"]; ok {
		t.Error("the store's instruments were registered without WithStore")
	}
}

// TestScrapeStore checks that WithStore reports the Redis store's calls
// and errors, that the transport's own count of fleet-store errors grows
// when Redis goes away, and that Unregister stops the callback and the
// histograms.
func TestScrapeStore(t *testing.T) {
	srv := redistest.Start(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	t.Cleanup(site.Close)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	store := redisstore.New(rdb, redisstore.Options{Prefix: "otel:", Timeout: 200 * time.Millisecond})
	clock := fakeclock.New()
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: time.Second, Fleet: store, Now: clock.Now, Sleep: clock.Sleep})
	provider, scrapeNow := prometheusServer(t)
	reg, err := otelrobots.Register(tr, provider, otelrobots.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	get := func(path string) {
		t.Helper()
		resp, err := client.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/up")
	if got := scrapeNow(); got.values["robots_redisstore_calls_total"] == 0 || got.values["robots_redisstore_errors_total"] != 0 || got.values["robots_fleet_errors_total"] != 0 {
		t.Errorf("with Redis up: calls %v, errors %v, transport's store errors %v; want calls and no errors",
			got.values["robots_redisstore_calls_total"], got.values["robots_redisstore_errors_total"], got.values["robots_fleet_errors_total"])
	}
	srv.Stop()
	get("/down")
	got := scrapeNow()
	if got.values["robots_redisstore_errors_total"] == 0 || got.values["robots_fleet_errors_total"] == 0 {
		t.Errorf("with Redis down: store errors %v, transport's store errors %v; want both counted",
			got.values["robots_redisstore_errors_total"], got.values["robots_fleet_errors_total"])
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if _, ok := scrapeNow().values["robots_origins"]; ok {
		t.Error("the instruments still report after Unregister")
	}
	waits := scrapeNow().values["robots_wait_duration_seconds_count"]
	get("/after")
	if n := scrapeNow().values["robots_wait_duration_seconds_count"]; n != waits {
		t.Errorf("a wait after Unregister was recorded: %v waits, want %v", n, waits)
	}
}

// TestScrapeOutcomes checks the metrics an operator watches in trouble,
// each with a value a crawl's trouble gives it: a page answered 404, one
// answered 429 that pauses its origin, a request failed at once because
// its slot lies in that pause, an origin whose robots.txt answers 503,
// the fleet's member, and a Redis that goes away, whose errors the
// transport counts exactly as the store counts them, apart from the
// calls answered without it.
func TestScrapeOutcomes(t *testing.T) {
	srv := redistest.Start(t)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/gone":
			w.WriteHeader(http.StatusNotFound)
		case "/busy":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, "page")
		}
	})
	site := httptest.NewServer(handler)
	t.Cleanup(site.Close)
	other := httptest.NewServer(handler)
	t.Cleanup(other.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	// A long cooldown, so that the calls after the first failure are
	// skipped: fallbacks, not errors.
	store := redisstore.New(rdb, redisstore.Options{Prefix: "outcomes:", Timeout: 200 * time.Millisecond, Cooldown: time.Hour})
	clock := fakeclock.New()
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: time.Second, Fleet: store, Now: clock.Now, Sleep: clock.Sleep})
	provider, scrapeNow := prometheusServer(t)
	if _, err := otelrobots.Register(tr, provider, otelrobots.WithStore(store)); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	for _, u := range []string{site.URL + "/a", site.URL + "/gone", site.URL + "/busy", down.URL + "/x"} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
		} else if u != down.URL+"/x" || !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("%s: %v", u, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL+"/in-the-pause", nil)
	if _, err := client.Do(req); !errors.As(err, new(*robots.SlotError)) {
		t.Fatalf("a request due 30s on, 10s left: err = %v, want a *robots.SlotError", err)
	}

	got := scrapeNow()
	got.expect(t, map[string]float64{
		`robots_responses_total{robots_status_class="2xx"}`:                     1,
		`robots_responses_total{robots_status_class="4xx"}`:                     2,
		`robots_responses_total{robots_status_class="5xx"}`:                     0,
		`robots_responses_total{robots_status_class="network"}`:                 0,
		`robots_pauses_total{http_response_status_code="429"}`:                  1,
		`robots_pauses_total{http_response_status_code="503"}`:                  0,
		`robots_slot_errors_total`:                                              1,
		`robots_origins_paused`:                                                 1,
		`robots_origins_unreachable`:                                            1,
		`robots_fleet_members`:                                                  1,
		`robots_requests_sent_total{robots_target="page"}`:                      3,
		`robots_wait_duration_seconds_count`:                                    4,
		`robots_txt_fetch_duration_seconds_count{robots_outcome="parsed"}`:      1,
		`robots_txt_fetch_duration_seconds_count{robots_outcome="unreachable"}`: 1,
		`robots_fleet_errors_total`:                                             0,
		`robots_fleet_fallbacks_total`:                                          0,
	})

	// The second and third pages waited their second, the first and the
	// one refused its slot nothing; the store rounds a slot up to its
	// millisecond.
	// The first page and the one refused its slot waited nothing, the
	// second and third their second and the half millisecond by which a
	// fleet slot is spread at least.
	if buckets := [...]float64{got.values[`robots_wait_duration_seconds_bucket{le="0.01"}`], got.values[`robots_wait_duration_seconds_bucket{le="2"}`]}; buckets != [...]float64{2, 4} {
		t.Errorf("robots_wait_duration_seconds_bucket le 0.01 and 2: %v, want [2 4]", buckets)
	}
	if sum := got.values["robots_wait_duration_seconds_sum"]; sum < 2 || sum > 2.002 {
		t.Errorf("robots_wait_duration_seconds_sum = %v, want 2 seconds", sum)
	}

	srv.Stop()
	for _, path := range []string{"/1", "/2", "/3"} {
		resp, err := client.Get(other.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got = scrapeNow()
	errs, fallbacks := got.values["robots_fleet_errors_total"], got.values["robots_fleet_fallbacks_total"]
	if want := got.values["robots_redisstore_errors_total"]; errs != want || errs == 0 {
		t.Errorf("with Redis down: fleet errors %v, the store counted %v; want them equal and not 0", errs, want)
	}
	if want := got.values["robots_redisstore_fallbacks_total"]; fallbacks != want || fallbacks <= errs {
		t.Errorf("with Redis down: fleet fallbacks %v, the store counted %v, errors %v; want them equal and more than the errors",
			fallbacks, want, errs)
	}
}

// TestRegisterNil checks that a nil Transport is a clear error.
func TestRegisterNil(t *testing.T) {
	if _, err := otelrobots.Register(nil, nil); err == nil || !strings.Contains(err.Error(), "Transport") {
		t.Errorf("Register(nil) = %v, want an error naming the Transport", err)
	}
}

// TestScrapeFrontier crawls a site through a frontier registered with
// WithFrontier: a page, a page refused by a rule, a page that answers
// 500 and one whose request fails, each tried once; the scrape shows
// each URL's final state, the outcomes by class and the refusal.
func TestScrapeFrontier(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		case "/hangup":
			panic(http.ErrAbortHandler)
		default:
			io.WriteString(w, "page")
		}
	}))
	t.Cleanup(site.Close)
	provider, scrapeNow := prometheusServer(t)
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1})
	f := frontier.New(tr, frontier.Options{MaxAttempts: 1})
	if _, err := otelrobots.Register(tr, provider, otelrobots.WithFrontier(f)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/private/x", "/broken", "/hangup"} {
		if _, err := f.Add(site.URL + p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitCeiling)
	defer cancel()
	for {
		l, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		f.Done(ctx, l, resp, err)
	}
	scrapeNow().expect(t, map[string]float64{
		`robots_frontier_urls{robots_state="queued"}`:                 0,
		`robots_frontier_urls{robots_state="in_flight"}`:              0,
		`robots_frontier_urls{robots_state="waiting"}`:                0,
		`robots_frontier_urls{robots_state="done"}`:                   1,
		`robots_frontier_urls{robots_state="refused"}`:                1,
		`robots_frontier_urls{robots_state="failed"}`:                 2,
		`robots_frontier_outcomes_total{robots_status_class="2xx"}`:   1,
		`robots_frontier_outcomes_total{robots_status_class="5xx"}`:   1,
		`robots_frontier_outcomes_total{robots_status_class="error"}`: 2,
		`robots_frontier_retries_total`:                               0,
		`robots_frontier_refusals_total{robots_reason="rule"}`:        1,
		`robots_frontier_refusals_total{robots_reason="preference"}`:  0,
	})
}

// TestScrapePayment checks the payment instruments: a page paid once, its
// charge summed in the currency's millionths, and a page over the limit
// refused.
func TestScrapePayment(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/dear":
			w.Header().Set("Crawler-Price", "USD 1.00")
			w.WriteHeader(http.StatusPaymentRequired)
		case r.Header.Get("Crawler-Exact-Price") == "USD 0.02":
			w.Header().Set("Crawler-Charged", "USD 0.02")
			io.WriteString(w, "paid")
		default:
			w.Header().Set("Crawler-Price", "USD 0.02")
			w.WriteHeader(http.StatusPaymentRequired)
		}
	}))
	t.Cleanup(site.Close)
	pay := robots.Payment{MaxPrice: robots.MustParsePrice("USD 0.05"), Budget: robots.MustParsePrice("USD 1")}
	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, Payment: pay})
	provider, scrapeNow := prometheusServer(t)
	if _, err := otelrobots.Register(tr, provider); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: time.Minute, Transport: tr}
	resp, err := client.Get(site.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := client.Get(site.URL + "/dear"); !errors.Is(err, robots.ErrPaymentRequired) {
		t.Fatalf("a page over the limit: %v; want ErrPaymentRequired", err)
	}
	scrapeNow().expect(t, map[string]float64{
		`robots_payment_charged_total`:                      1,
		`robots_payment_spent_total{robots_currency="USD"}`: 20000,
		`robots_payment_refused_total`:                      1,
	})
}
