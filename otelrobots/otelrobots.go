// Package otelrobots reports what a robots.Transport does as OpenTelemetry
// metrics: its robots.txt fetches, its decisions, its politeness waits,
// the origins it holds and, optionally, the health of a redisstore.Store.
//
// It is a module of its own, as go-redis keeps redisotel apart, so that
// the robots module depends on no OpenTelemetry package. Every instrument
// is asynchronous: it reads Transport.Stats (and Store.Stats) when the
// MeterProvider collects, so that registering adds nothing to a request's
// path. No instrument has an attribute per origin or URL, whose values a
// crawl would make unbounded.
//
// The instruments, named by the OpenTelemetry conventions and exported by
// the Prometheus exporter under the names in brackets:
//
//	robots.fetches              counter   {fetch}     robots.outcome                  [robots_fetches_total]
//	robots.fetch.status_classes counter   {fetch}     robots.status_class             [robots_fetch_status_classes_total]
//	robots.revalidations        counter   {fetch}                                     [robots_revalidations_total]
//	robots.decisions            counter   {decision}  robots.decision, robots.reason  [robots_decisions_total]
//	robots.requests.sent        counter   {request}                                   [robots_requests_sent_total]
//	robots.robots_txt.requests  counter   {request}                                   [robots_robots_txt_requests_total]
//	robots.wait.time            counter   s                                           [robots_wait_time_seconds_total]
//	robots.requests.waiting     updown    {request}                                   [robots_requests_waiting]
//	robots.origins              updown    {origin}                                    [robots_origins]
//	robots.store.errors         counter   {error}                                     [robots_store_errors_total]
//
// and with WithStore:
//
//	robots.redisstore.calls     counter   {call}                                      [robots_redisstore_calls_total]
//	robots.redisstore.errors    counter   {error}                                     [robots_redisstore_errors_total]
//	robots.redisstore.fallbacks counter   {call}                                      [robots_redisstore_fallbacks_total]
//
// robots.outcome is parsed, unavailable or unreachable; robots.status_class
// is 2xx, 3xx, 4xx, 5xx or network; robots.decision is allowed or refused,
// and a refusal's robots.reason is rule (drop the URL), unreachable
// (requeue it) or preference (an AI usage preference). What each counts is
// the godoc of the robots.Stats field it reads.
package otelrobots

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/redisstore"
)

// ScopeName is the instrumentation scope the instruments are registered
// under: the meter's name.
const ScopeName = "github.com/crawlkit/robots/otelrobots"

// Option changes what Register registers.
type Option func(*config)

type config struct {
	store *redisstore.Store
}

// WithStore adds the instruments of store's health (calls, errors and
// fallbacks, from redisstore.Store.Stats), for a transport whose
// Options.Cache is store.
func WithStore(store *redisstore.Store) Option {
	return func(c *config) { c.store = store }
}

// Register registers the instruments of t with a meter of mp (the global
// MeterProvider when mp is nil) and returns the registration of their
// callback: Unregister stops the reporting. It returns an error when t
// is nil or an instrument cannot be created.
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
	if err := ins.create(m, c.store != nil); err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		ins.observe(o, t.Stats())
		if c.store != nil {
			ins.observeStore(o, c.store.Stats())
		}
		return nil
	}, ins.all()...)
}

// instruments are the instruments Register creates.
type instruments struct {
	fetches, statuses, revalidations metric.Int64ObservableCounter
	decisions                        metric.Int64ObservableCounter
	sent, robotsRequests             metric.Int64ObservableCounter
	waited                           metric.Float64ObservableCounter
	waiting, origins                 metric.Int64ObservableUpDownCounter
	storeErrors                      metric.Int64ObservableCounter

	storeCalls, storeFailures, storeFallbacks metric.Int64ObservableCounter
}

func (ins *instruments) create(m metric.Meter, store bool) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	ins.fetches = counter("robots.fetches", "{fetch}", "robots.txt fetches by outcome.")
	ins.statuses = counter("robots.fetch.status_classes", "{fetch}", "robots.txt fetches by the class of the status they ended on; network when no answer came.")
	ins.revalidations = counter("robots.revalidations", "{fetch}", "robots.txt fetches answered 304 Not Modified, whose stored copy was renewed.")
	ins.decisions = counter("robots.decisions", "{decision}", "Requests decided, by result and, for a refusal, its reason.")
	ins.sent = counter("robots.requests.sent", "{request}", "Requests handed to the base RoundTripper.")
	ins.robotsRequests = counter("robots.robots_txt.requests", "{request}", "Requests for /robots.txt itself that went through the transport.")
	var err error
	ins.waited, err = m.Float64ObservableCounter("robots.wait.time", metric.WithUnit("s"), metric.WithDescription("Time requests spent waiting for their politeness slot."))
	errs = append(errs, err)
	ins.waiting = gauge("robots.requests.waiting", "{request}", "Requests waiting for their politeness slot now.")
	ins.origins = gauge("robots.origins", "{origin}", "Origins whose robots state is held in memory.")
	ins.storeErrors = counter("robots.store.errors", "{error}", "Calls to the fleet store that failed; the transport used its own state.")
	if store {
		ins.storeCalls = counter("robots.redisstore.calls", "{call}", "Calls the Redis store was given.")
		ins.storeFailures = counter("robots.redisstore.errors", "{error}", "Calls Redis failed or did not answer in time.")
		ins.storeFallbacks = counter("robots.redisstore.fallbacks", "{call}", "Calls answered without Redis, failed or skipped during a cooldown.")
	}
	return errors.Join(errs...)
}

// all returns the instruments the callback observes.
func (ins *instruments) all() []metric.Observable {
	all := []metric.Observable{ins.fetches, ins.statuses, ins.revalidations, ins.decisions, ins.sent,
		ins.robotsRequests, ins.waited, ins.waiting, ins.origins, ins.storeErrors}
	if ins.storeCalls != nil {
		all = append(all, ins.storeCalls, ins.storeFailures, ins.storeFallbacks)
	}
	return all
}

// Attribute keys, and the attribute sets of the decisions, made once.
var (
	outcomeKey  = attribute.Key("robots.outcome")
	classKey    = attribute.Key("robots.status_class")
	decisionKey = attribute.Key("robots.decision")
	reasonKey   = attribute.Key("robots.reason")

	allowed       = metric.WithAttributes(decisionKey.String("allowed"))
	byRule        = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("rule"))
	byUnreachable = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("unreachable"))
	byPreference  = metric.WithAttributes(decisionKey.String("refused"), reasonKey.String("preference"))
)

// observe reports s.
func (ins *instruments) observe(o metric.Observer, s robots.Stats) {
	// Stats holds every outcome and status class, so that these are the
	// transport's own lists, whatever it adds.
	for outcome, n := range s.Fetches {
		o.ObserveInt64(ins.fetches, n, metric.WithAttributes(outcomeKey.String(outcome.String())))
	}
	for class, n := range s.FetchStatus {
		o.ObserveInt64(ins.statuses, n, metric.WithAttributes(classKey.String(class)))
	}
	o.ObserveInt64(ins.revalidations, s.Revalidated)
	o.ObserveInt64(ins.decisions, s.Allowed, allowed)
	o.ObserveInt64(ins.decisions, s.RefusedByRule, byRule)
	o.ObserveInt64(ins.decisions, s.RefusedUnreachable, byUnreachable)
	o.ObserveInt64(ins.decisions, s.RefusedByPreference, byPreference)
	o.ObserveInt64(ins.sent, s.Sent)
	o.ObserveInt64(ins.robotsRequests, s.RobotsRequests)
	o.ObserveFloat64(ins.waited, s.Waited.Seconds())
	o.ObserveInt64(ins.waiting, int64(s.Waiting))
	o.ObserveInt64(ins.origins, int64(s.Origins))
	o.ObserveInt64(ins.storeErrors, s.StoreErrors)
}

// observeStore reports s.
func (ins *instruments) observeStore(o metric.Observer, s redisstore.Stats) {
	o.ObserveInt64(ins.storeCalls, s.Calls)
	o.ObserveInt64(ins.storeFailures, s.Errors)
	o.ObserveInt64(ins.storeFallbacks, s.Fallbacks)
}
