// Package otelrobots reports what a robots.Transport does as OpenTelemetry
// metrics: its robots.txt fetches, its decisions, the pages it sent and
// what they answered, its politeness waits and pauses, the origins it
// holds, its fleet store and, optionally, the health of a
// redisstore.Store.
//
// It is a module of its own, as go-redis keeps redisotel apart, so that
// the robots module depends on no OpenTelemetry package. The counters and
// gauges are asynchronous: they read Transport.Stats (and Store.Stats)
// when the MeterProvider collects, adding nothing to a request's path.
// The two histograms record each wait and each robots.txt fetch as it
// ends, through Transport.AddHooks. No instrument has an attribute per
// origin or URL, whose values a crawl would make unbounded.
//
// The instruments, named by the OpenTelemetry conventions and exported by
// the Prometheus exporter under the names in brackets:
//
//	robots.txt.fetches           counter    {fetch}     robots.outcome                  [robots_txt_fetches_total]
//	robots.txt.responses         counter    {fetch}     robots.status_class             [robots_txt_responses_total]
//	robots.txt.revalidations     counter    {fetch}                                     [robots_txt_revalidations_total]
//	robots.txt.fetch.duration    histogram  s           robots.outcome                  [robots_txt_fetch_duration_seconds]
//	robots.decisions             counter    {decision}  robots.decision, robots.reason  [robots_decisions_total]
//	robots.requests.sent         counter    {request}   robots.target                   [robots_requests_sent_total]
//	robots.responses             counter    {response}  robots.status_class             [robots_responses_total]
//	robots.wait.duration         histogram  s                                           [robots_wait_duration_seconds]
//	robots.requests.waiting      updown     {request}                                   [robots_requests_waiting]
//	robots.pauses                counter    {pause}     http.response.status_code       [robots_pauses_total]
//	robots.slot_errors           counter    {request}                                   [robots_slot_errors_total]
//	robots.origins               updown     {origin}                                    [robots_origins]
//	robots.origins.paused        updown     {origin}                                    [robots_origins_paused]
//	robots.origins.unreachable   updown     {origin}                                    [robots_origins_unreachable]
//	robots.fleet.members         gauge      {member}                                    [robots_fleet_members]
//	robots.fleet.errors          counter    {error}                                     [robots_fleet_errors_total]
//	robots.fleet.fallbacks       counter    {call}                                      [robots_fleet_fallbacks_total]
//	robots.payment.charged       counter    {response}                                  [robots_payment_charged_total]
//	robots.payment.spent         counter    {micro}     robots.currency                 [robots_payment_spent_total]
//	robots.payment.refused       counter    {request}                                   [robots_payment_refused_total]
//
// and with WithStore:
//
//	robots.redisstore.calls      counter    {call}                                      [robots_redisstore_calls_total]
//	robots.redisstore.errors     counter    {error}                                     [robots_redisstore_errors_total]
//	robots.redisstore.fallbacks  counter    {call}                                      [robots_redisstore_fallbacks_total]
//
// and with WithFrontier:
//
//	robots.frontier.urls         updown     {url}       robots.state                    [robots_frontier_urls]
//	robots.frontier.outcomes     counter    {outcome}   robots.status_class             [robots_frontier_outcomes_total]
//	robots.frontier.retries      counter    {outcome}                                   [robots_frontier_retries_total]
//	robots.frontier.refusals     counter    {url}       robots.reason                   [robots_frontier_refusals_total]
//
// robots.outcome is parsed, unavailable or unreachable; robots.status_class
// is 1xx to 5xx, or network when no answer came; robots.decision is
// allowed or refused, and a refusal's robots.reason is rule (drop the
// URL), unreachable (requeue it) or preference (an AI usage preference);
// robots.target is page, or robots.txt for a request for /robots.txt
// itself; a pause's status code is 429 or 503. robots.fleet.errors are
// the store calls that failed, and equal the store's own count
// (robots.redisstore.errors); robots.fleet.fallbacks are all the calls
// answered from the process's own state, those failed and those the
// store skipped during its cooldown. robots.state is queued, in_flight,
// waiting, done, refused or failed; a frontier outcome's status class is
// 1xx to 5xx, or error. What each counts is the godoc of the robots.Stats
// (or frontier.Stats) field it reads.
package otelrobots

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/frontier"
	"github.com/crawlkit/robots/redisstore"
)

// ScopeName is the instrumentation scope the instruments are registered
// under: the meter's name.
const ScopeName = "github.com/crawlkit/robots/otelrobots"

// Bucket boundaries, in seconds. A wait runs from nothing to a
// Crawl-delay or a Retry-After of minutes; a robots.txt fetch from
// milliseconds to its timeout.
var (
	waitBuckets  = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	fetchBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
)

// Option changes what Register registers.
type Option func(*config)

type config struct {
	store    *redisstore.Store
	frontier *frontier.Frontier
}

// WithStore adds the instruments of store's health (calls, errors and
// fallbacks, from redisstore.Store.Stats), for a transport whose
// Options.Fleet is store.
func WithStore(store *redisstore.Store) Option {
	return func(c *config) { c.store = store }
}

// WithFrontier adds the instruments of f's progress (from
// frontier.Frontier.Stats), for a frontier scheduling on the transport.
func WithFrontier(f *frontier.Frontier) Option {
	return func(c *config) { c.frontier = f }
}

// Register registers the instruments of t with a meter of mp (the global
// MeterProvider when mp is nil) and returns their registration:
// Unregister stops the reporting and the recording of the histograms. It
// returns an error when t is nil or an instrument cannot be created.
func Register(t *robots.Transport, mp metric.MeterProvider, opts ...Option) (metric.Registration, error) {
	if t == nil {
		return nil, errors.New("otelrobots: Register needs a Transport")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var ins instruments
	if err := ins.create(m, c.store != nil, c.frontier != nil); err != nil {
		return nil, err
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		ins.observe(o, t.Stats())
		if c.store != nil {
			ins.observeStore(o, c.store.Stats())
		}
		if c.frontier != nil {
			ins.observeFrontier(o, c.frontier.Stats())
		}
		return nil
	}, ins.all()...)
	if err != nil {
		return nil, err
	}
	remove := t.AddHooks(robots.Hooks{
		Waited: func(d time.Duration) {
			ins.waits.Record(context.Background(), d.Seconds())
		},
		Fetched: func(outcome robots.Outcome, d time.Duration) {
			ins.fetchTimes.Record(context.Background(), d.Seconds(), outcomeAttrs[outcome])
		},
	})
	return registration{callback: reg, hooks: remove}, nil
}

// registration is Register's: the callback's and the hooks'.
type registration struct {
	embedded.Registration
	callback metric.Registration
	hooks    func()
}

// Unregister stops the callback and the hooks.
func (r registration) Unregister() error {
	r.hooks()
	return r.callback.Unregister()
}

// instruments are the instruments Register creates.
type instruments struct {
	fetches, responsesTxt, revalidations metric.Int64ObservableCounter
	decisions, sent, responses           metric.Int64ObservableCounter
	pauses, slotErrors                   metric.Int64ObservableCounter
	fleetErrors, fleetFallbacks          metric.Int64ObservableCounter
	charged, spent, priceRefused         metric.Int64ObservableCounter
	waiting, origins, paused, down       metric.Int64ObservableUpDownCounter
	members                              metric.Int64ObservableGauge
	waits, fetchTimes                    metric.Float64Histogram

	storeCalls, storeFailures, storeFallbacks metric.Int64ObservableCounter

	frontierURLs                                        metric.Int64ObservableUpDownCounter
	frontierOutcomes, frontierRetries, frontierRefusals metric.Int64ObservableCounter
}

func (ins *instruments) create(m metric.Meter, store, frontier bool) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	updown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	ins.fetches = counter("robots.txt.fetches", "{fetch}", "robots.txt fetches of the transport's own, by outcome.")
	ins.responsesTxt = counter("robots.txt.responses", "{fetch}", "robots.txt fetches by the class of the status they ended on; network when no answer came.")
	ins.revalidations = counter("robots.txt.revalidations", "{fetch}", "robots.txt fetches answered 304 Not Modified, whose stored copy was renewed.")
	ins.fetchTimes = histogram("robots.txt.fetch.duration", "How long each robots.txt fetch took, redirects included, by outcome.", fetchBuckets)
	ins.decisions = counter("robots.decisions", "{decision}", "Requests decided, by result and, for a refusal, its reason.")
	ins.sent = counter("robots.requests.sent", "{request}", "Requests handed to the base RoundTripper: pages, and requests for /robots.txt itself.")
	ins.responses = counter("robots.responses", "{response}", "Answers to the requests sent, by status class; network when the base RoundTripper failed.")
	ins.waits = histogram("robots.wait.duration", "How long each paced request waited for its politeness slot.", waitBuckets)
	ins.waiting = updown("robots.requests.waiting", "{request}", "Requests asleep until their politeness slot now.")
	ins.pauses = counter("robots.pauses", "{pause}", "Retry-After pauses that responses started, by their status.")
	ins.slotErrors = counter("robots.slot_errors", "{request}", "Requests failed at once because their politeness slot lay past their deadline.")
	ins.origins = updown("robots.origins", "{origin}", "Origins whose robots state is held in memory.")
	ins.paused = updown("robots.origins.paused", "{origin}", "Origins held in a Retry-After pause now.")
	ins.down = updown("robots.origins.unreachable", "{origin}", "Origins whose robots.txt is unreachable now.")
	var err error
	ins.members, err = m.Int64ObservableGauge("robots.fleet.members", metric.WithUnit("{member}"),
		metric.WithDescription("Fleet members pacing an origin, this one included, at the last slot the store granted."))
	errs = append(errs, err)
	ins.fleetErrors = counter("robots.fleet.errors", "{error}", "Calls to the fleet store that failed: it was asked and could not answer.")
	ins.fleetFallbacks = counter("robots.fleet.fallbacks", "{call}", "Calls to the fleet store answered from the process's own state: failed, or skipped in the store's cooldown.")
	ins.charged = counter("robots.payment.charged", "{response}", "Responses that said what the site charged (crawler-charged).")
	ins.spent = counter("robots.payment.spent", "{micro}", "What sites charged, in millionths of the currency named.")
	ins.priceRefused = counter("robots.payment.refused", "{request}", "Requests not paid for: over the price limit or the budget, paid already, or a pay-per-crawl error.")
	if store {
		ins.storeCalls = counter("robots.redisstore.calls", "{call}", "Calls the Redis store was given.")
		ins.storeFailures = counter("robots.redisstore.errors", "{error}", "Calls Redis failed or did not answer in time.")
		ins.storeFallbacks = counter("robots.redisstore.fallbacks", "{call}", "Calls answered without Redis, failed or skipped during a cooldown.")
	}
	if frontier {
		ins.frontierURLs = updown("robots.frontier.urls", "{url}", "URLs the frontier holds, by state.")
		ins.frontierOutcomes = counter("robots.frontier.outcomes", "{outcome}", "Outcomes workers gave back to the frontier, by status class; error when the request failed.")
		ins.frontierRetries = counter("robots.frontier.retries", "{outcome}", "Outcomes that sent a URL back to wait: retries, slots another member took, workers stopping.")
		ins.frontierRefusals = counter("robots.frontier.refusals", "{url}", "URLs refused for good, by a rule or an AI usage preference.")
	}
	return errors.Join(errs...)
}

// all returns the instruments the callback observes.
func (ins *instruments) all() []metric.Observable {
	all := []metric.Observable{ins.fetches, ins.responsesTxt, ins.revalidations, ins.decisions,
		ins.sent, ins.responses, ins.waiting, ins.pauses, ins.slotErrors, ins.origins, ins.paused,
		ins.down, ins.members, ins.fleetErrors, ins.fleetFallbacks, ins.charged, ins.spent, ins.priceRefused}
	if ins.storeCalls != nil {
		all = append(all, ins.storeCalls, ins.storeFailures, ins.storeFallbacks)
	}
	if ins.frontierURLs != nil {
		all = append(all, ins.frontierURLs, ins.frontierOutcomes, ins.frontierRetries, ins.frontierRefusals)
	}
	return all
}

// Attribute keys, and the attribute sets that do not vary, made once.
var (
	outcomeKey  = attribute.Key("robots.outcome")
	classKey    = attribute.Key("robots.status_class")
	decisionKey = attribute.Key("robots.decision")
	reasonKey   = attribute.Key("robots.reason")
	targetKey   = attribute.Key("robots.target")
	statusKey   = attribute.Key("http.response.status_code")
	stateKey    = attribute.Key("robots.state")
	currencyKey = attribute.Key("robots.currency")

	allowed       = metric.WithAttributes(decisionKey.String("allowed"))
	byRule        = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("rule"))
	byUnreachable = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("unreachable"))
	byPreference  = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("preference"))
	pages         = metric.WithAttributes(targetKey.String("page"))
	robotsTxt     = metric.WithAttributes(targetKey.String("robots.txt"))

	outcomeAttrs = map[robots.Outcome]metric.MeasurementOption{
		robots.Parsed:      metric.WithAttributes(outcomeKey.String(robots.Parsed.String())),
		robots.Unavailable: metric.WithAttributes(outcomeKey.String(robots.Unavailable.String())),
		robots.Unreachable: metric.WithAttributes(outcomeKey.String(robots.Unreachable.String())),
	}
)

// observe reports s.
func (ins *instruments) observe(o metric.Observer, s robots.Stats) {
	// Stats holds every outcome, status class and pause status, so that
	// these are the transport's own lists, whatever it adds.
	for outcome, n := range s.Fetches {
		o.ObserveInt64(ins.fetches, n, metric.WithAttributes(outcomeKey.String(outcome.String())))
	}
	for class, n := range s.FetchStatus {
		o.ObserveInt64(ins.responsesTxt, n, metric.WithAttributes(classKey.String(class)))
	}
	o.ObserveInt64(ins.revalidations, s.Revalidated)
	o.ObserveInt64(ins.decisions, s.Allowed, allowed)
	o.ObserveInt64(ins.decisions, s.RefusedByRule, byRule)
	o.ObserveInt64(ins.decisions, s.RefusedUnreachable, byUnreachable)
	o.ObserveInt64(ins.decisions, s.RefusedByPreference, byPreference)
	o.ObserveInt64(ins.sent, s.Sent-s.RobotsRequests, pages)
	o.ObserveInt64(ins.sent, s.RobotsRequests, robotsTxt)
	for class, n := range s.Responses {
		o.ObserveInt64(ins.responses, n, metric.WithAttributes(classKey.String(class)))
	}
	o.ObserveInt64(ins.waiting, int64(s.Waiting))
	for status, n := range s.Pauses {
		o.ObserveInt64(ins.pauses, n, metric.WithAttributes(statusKey.Int(status)))
	}
	o.ObserveInt64(ins.slotErrors, s.SlotErrors)
	o.ObserveInt64(ins.origins, int64(s.Origins))
	o.ObserveInt64(ins.paused, int64(s.OriginsPaused))
	o.ObserveInt64(ins.down, int64(s.OriginsUnreachable))
	o.ObserveInt64(ins.members, int64(s.FleetMembers))
	o.ObserveInt64(ins.fleetErrors, s.StoreErrors)
	o.ObserveInt64(ins.fleetFallbacks, s.StoreFallbacks)
	o.ObserveInt64(ins.charged, s.Charged)
	if s.Spent.Currency != "" {
		o.ObserveInt64(ins.spent, s.Spent.Micros, metric.WithAttributes(currencyKey.String(s.Spent.Currency)))
	}
	o.ObserveInt64(ins.priceRefused, s.PriceRefused)
}

// observeStore reports s.
func (ins *instruments) observeStore(o metric.Observer, s redisstore.Stats) {
	o.ObserveInt64(ins.storeCalls, s.Calls)
	o.ObserveInt64(ins.storeFailures, s.Errors)
	o.ObserveInt64(ins.storeFallbacks, s.Fallbacks)
}

// observeFrontier reports s.
func (ins *instruments) observeFrontier(o metric.Observer, s frontier.Stats) {
	for _, st := range []struct {
		name string
		n    int
	}{{"queued", s.Queued}, {"in_flight", s.InFlight}, {"waiting", s.Waiting}, {"done", s.Done}, {"refused", s.Refused}, {"failed", s.Failed}} {
		o.ObserveInt64(ins.frontierURLs, int64(st.n), metric.WithAttributes(stateKey.String(st.name)))
	}
	for class, n := range s.Responses {
		o.ObserveInt64(ins.frontierOutcomes, n, metric.WithAttributes(classKey.String(class)))
	}
	o.ObserveInt64(ins.frontierRetries, s.Retries)
	o.ObserveInt64(ins.frontierRefusals, s.RefusedByRule, metric.WithAttributes(reasonKey.String("rule")))
	o.ObserveInt64(ins.frontierRefusals, s.RefusedByPreference, metric.WithAttributes(reasonKey.String("preference")))
}
