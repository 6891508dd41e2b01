package robots

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gregjones/httpcache"
	"golang.org/x/net/http/httpguts"

	"github.com/crawlkit/robots/policy"
)

// Defaults for the zero fields of Options.
const (
	// DefaultFetchTimeout bounds one robots.txt fetch, redirects and body
	// included.
	DefaultFetchTimeout = 30 * time.Second
	// DefaultMinDelay is the least time between two requests to one
	// origin.
	DefaultMinDelay = time.Second
	// DefaultMaxCrawlDelay caps how far a Crawl-delay line raises the
	// delay.
	DefaultMaxCrawlDelay = 30 * time.Second
	// DefaultFreshness is how long a fetched robots.txt is reused (RFC 9309
	// section 2.4).
	DefaultFreshness = 24 * time.Hour
	// DefaultMinFreshness is the shortest time a fetched robots.txt is
	// reused, whatever its Cache-Control says.
	DefaultMinFreshness = time.Minute
	// DefaultFallbackAfter is how long an origin's robots.txt must stay
	// unreachable before its last good copy is used (RFC 9309 section
	// 2.3.1.4).
	DefaultFallbackAfter = 30 * 24 * time.Hour
	// DefaultMinBackoff is the wait before the first retry of an
	// unreachable robots.txt.
	DefaultMinBackoff = time.Minute
	// DefaultMaxBackoff is the longest wait between retries of an
	// unreachable robots.txt, and the longest pause a Retry-After can
	// impose.
	DefaultMaxBackoff = 4 * time.Hour
	// DefaultMaxRedirects is how many redirects a robots.txt fetch follows
	// (RFC 9309 section 2.3.1.2).
	DefaultMaxRedirects = 5
	// DefaultMaxOrigins is how many origins a transport keeps in memory.
	DefaultMaxOrigins = 10000
	// DefaultMaxRobotsBytes bounds the memory that the parsed robots.txt
	// of the origins held take.
	DefaultMaxRobotsBytes = 256 << 20
	// DefaultCacheBytes bounds the bytes of the store a transport makes
	// when Options.Cache is nil.
	DefaultCacheBytes = 128 << 20
	// MaxMaxSize is the most that Options.MaxSize can raise the bytes read
	// of one robots.txt to; larger values are clamped to it.
	MaxMaxSize = 1 << 30
)

// Options configures a Transport. The zero value works: it uses the
// defaults above and chooses groups by the product token of each
// request's own User-Agent.
type Options struct {
	// UserAgent is sent as the User-Agent of robots.txt fetches and of
	// requests that carry none. Its product token, as policy.ProductToken
	// reads it ("ExampleBot" in "ExampleBot/1.0
	// (+https://example.com/bot)"), selects the groups that apply, unless
	// Agents is set. If UserAgent and Agents are both empty, no User-Agent
	// is added and each request's groups are chosen by the product token
	// of its own User-Agent header (as Scrapy does); a request without
	// one, and Check and Robots, get the "*" groups. A UserAgent that no
	// header may carry (a control character) makes every request fail
	// with an error saying so.
	UserAgent string
	// Agents are the product tokens the crawler answers to, most specific
	// first ("Googlebot-Image", "Googlebot"): the first that has a group in
	// a robots.txt selects it (RFC 9309 section 2.2.1). If empty, the
	// product token of UserAgent is used. An entry that is not a product
	// token ("Googlebot/2.1", "") would select no group, so it makes
	// every request fail with an error naming it.
	Agents []string
	// Now is the clock that every freshness, back-off, fallback and
	// politeness time is read from, so that a test can move time forward.
	// If nil, time.Now is used. A test in a testing/synctest bubble needs
	// neither Now nor Sleep: the bubble's time is the transport's.
	Now func() time.Time
	// Sleep waits for d or until ctx is done, returning ctx.Err() in the
	// latter case; politeness waits go through it, and so does a fleet
	// member's wait for the robots.txt another member is fetching. A test
	// that sets Now sets Sleep to advance its clock instead of sleeping:
	// every wait is then a jump, the wait for another member's fetch
	// included (it runs out at once, and the member fetches too), so that
	// a fleet's test runs in a testing/synctest bubble instead. If nil, a
	// real timer is used.
	Sleep func(ctx context.Context, d time.Duration) error
	// FetchTimeout bounds one robots.txt fetch, redirects and body
	// included, even when the base RoundTripper ignores its context; a
	// fetch that runs out is an unreachable robots.txt. It bounds as well
	// each Fleet call made detached from a request (see Fleet). If zero
	// or negative, DefaultFetchTimeout is used.
	FetchTimeout time.Duration
	// MinDelay is the least time between two requests to one origin. If
	// negative, requests are not spaced unless a Crawl-delay asks for it;
	// if zero, DefaultMinDelay is used.
	MinDelay time.Duration
	// MaxCrawlDelay caps how far the Crawl-delay of the crawler's groups
	// raises the delay between requests to an origin. If negative,
	// Crawl-delay is ignored; if zero, DefaultMaxCrawlDelay is used.
	MaxCrawlDelay time.Duration
	// Freshness is how long a fetched robots.txt, or a 4xx answer, is
	// reused before it is fetched again, counted from when its fetch
	// began, as HTTP caches count; a shorter Cache-Control max-age, less
	// the response's Age, is honoured down to MinFreshness. If zero or
	// negative, DefaultFreshness (24 hours) is used.
	Freshness time.Duration
	// MinFreshness is the shortest time a fetched robots.txt is reused,
	// counted from when it arrived, so that max-age=0, no-cache, no-store
	// or a slow fetch never mean a fetch per request. It is never more
	// than Freshness. If zero or negative, DefaultMinFreshness (a minute)
	// is used.
	MinFreshness time.Duration
	// FallbackAfter is how long an origin's robots.txt must stay
	// unreachable, refusing every request, before the last good copy is
	// used instead (or, with none, every request allowed). If zero or
	// negative, DefaultFallbackAfter (30 days) is used.
	FallbackAfter time.Duration
	// MinBackoff is the wait before the first retry of an unreachable
	// robots.txt (a 429, a 5xx or no answer); each further failure
	// doubles it, up to MaxBackoff. A Retry-After the robots.txt sent
	// lengthens the wait, never shortens it below MinBackoff: a server
	// that fails its robots.txt is in trouble, and each retry is a
	// request to it. Meanwhile every request to the origin is refused
	// (DisallowedError.RetryAt says until when), so on a short crawl one
	// such origin can set the wall time: lower MinBackoff for that. If
	// zero or negative, DefaultMinBackoff (a minute) is used.
	MinBackoff time.Duration
	// MaxBackoff caps the wait between retries of an unreachable
	// robots.txt and the pause that a Retry-After can impose on an
	// origin; it is never more than Freshness. If zero or negative,
	// DefaultMaxBackoff is used.
	MaxBackoff time.Duration
	// MaxRedirects is how many redirects a robots.txt fetch follows before
	// taking the robots.txt as unavailable. If negative, none is
	// followed; if zero, DefaultMaxRedirects is used.
	MaxRedirects int
	// MaxSize is how many bytes of a robots.txt are read; content past it
	// is ignored, cut back to the last complete line. RFC 9309 section 2.5
	// requires at least policy.MaxSize (500 KiB), so smaller values,
	// zero included, mean policy.MaxSize; values above MaxMaxSize mean
	// MaxMaxSize. A record read from Cache or Fleet is cut to it too; one
	// a process with a smaller MaxSize stored holds no more than that
	// process read, so a fleet's members share one MaxSize.
	MaxSize int
	// Cache is where each origin's robots record (outcome, validators,
	// body, outage clock) is kept, one entry per origin, when there is no
	// Fleet; transports in one process sharing one share their fetches.
	// Any httpcache.Cache works (MemoryCache, httpcache's backends). If
	// nil, a MemoryCache holding 2*MaxOrigins entries and
	// DefaultCacheBytes bytes is used. It is not used when Fleet is set.
	Cache httpcache.Cache
	// Fleet is a store shared by the processes of a crawler fleet (such
	// as redisstore.Store): it keeps the records in Cache's place, and
	// lets the fleet share one fetch per origin and each origin's pace
	// and Retry-After pauses, counting the members pacing it. If nil,
	// the transport paces alone, in memory.
	Fleet Fleet
	// MaxOrigins is how many origins' parsed robots.txt are held in
	// memory, the least useful forgotten first; a forgotten origin is
	// reloaded from Cache. Politeness slots and pauses, and the retry
	// time, back-off and start of an unreachable robots.txt's outage (not
	// its last good copy, which only Cache keeps), are kept apart, for
	// four times as many origins (at least 1,024, finished ones forgotten
	// first), so that forgetting an origin never shortens a wait; while
	// more origins than that are paused or within their delay at once,
	// their schedules are kept too, up to four times as many again, and
	// only past that are the oldest forgotten. If zero or negative,
	// DefaultMaxOrigins is used.
	MaxOrigins int
	// MaxRobotsBytes bounds the memory, in bytes, that the parsed
	// robots.txt of the origins held in memory take, alongside
	// MaxOrigins. If zero or negative, DefaultMaxRobotsBytes (256 MiB) is
	// used.
	MaxRobotsBytes int64
	// Logger records each robots.txt fetch with its outcome and each
	// refused request with its reason. If nil, nothing is logged.
	Logger *slog.Logger
	// Purposes are the uses the crawler makes of what it fetches, as AI
	// usage preference labels: "train-ai" and "search" (AIPREF), or
	// "ai-input" (Content-Signal only), in any letter case, with
	// Content-Signal's keys as aliases ("ai-train" for "train-ai"; see
	// policy.LabelOf). When the site's robots.txt preference for a URL
	// (Content-Usage and Content-Signal combined, see policy.Preferences)
	// is "n" for every purpose declared in some one form of the URL a
	// server may serve (policy.Agent.OptedOut), the request is refused unsent with a *DisallowedError
	// whose ByPreference reports true. A purpose that stands for no label
	// is a configuration error: it is logged once, and every request,
	// Check, Preferences and ResponsePreferences return an error matching
	// ErrUnknownPurpose that names it and the labels known. If empty,
	// preferences are only reported (Transport.Preferences), never
	// enforced.
	Purposes []string

	// Payment is what the crawler pays for pages a site charges for
	// (HTTP 402 with a price, Cloudflare's pay per crawl): at most
	// Payment.MaxPrice a request, at most Payment.Budget in all, each
	// URL once in the crawl. If zero, nothing is paid: a 402 that asks a
	// price fails the request with a *PaymentError saying what was
	// asked. See Payment.
	Payment Payment
}

// config is Options with every default applied and every value clamped:
// what the owners read.
type config struct {
	userAgent string
	tokens    []string
	purposes  []string
	// invalid is the error of an unknown purpose, a Payment that cannot
	// be kept, or a UserAgent or Agents entry that cannot be used, which
	// every request and check returns.
	invalid error
	pay     Payment
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
	logger  *slog.Logger

	fetchTimeout, minDelay, maxCrawlDelay time.Duration
	freshness, minFreshness               time.Duration
	fallbackAfter                         time.Duration
	minBackoff, maxBackoff                time.Duration
	maxRedirects, maxSize                 int
	maxOrigins                            int
	maxRobotsBytes                        int64
}

// newConfig applies the defaults to opts.
func newConfig(opts Options) config {
	c := config{
		userAgent:      opts.UserAgent,
		tokens:         opts.Agents,
		now:            opts.Now,
		sleep:          opts.Sleep,
		logger:         opts.Logger,
		fetchTimeout:   positiveOr(opts.FetchTimeout, DefaultFetchTimeout),
		minDelay:       max(orDefault(opts.MinDelay, DefaultMinDelay), 0),
		maxCrawlDelay:  max(orDefault(opts.MaxCrawlDelay, DefaultMaxCrawlDelay), 0),
		freshness:      positiveOr(opts.Freshness, DefaultFreshness),
		fallbackAfter:  positiveOr(opts.FallbackAfter, DefaultFallbackAfter),
		minBackoff:     positiveOr(opts.MinBackoff, DefaultMinBackoff),
		maxRedirects:   max(orDefault(opts.MaxRedirects, DefaultMaxRedirects), 0),
		maxSize:        min(max(opts.MaxSize, policy.MaxSize), MaxMaxSize),
		maxOrigins:     opts.MaxOrigins,
		maxRobotsBytes: opts.MaxRobotsBytes,
	}
	c.purposes, c.invalid = normalPurposes(opts.Purposes)
	c.invalid = cmp.Or(c.invalid, opts.Payment.check(), opts.checkIdentity())
	c.pay = opts.Payment
	if c.pay.Crawl == "" {
		c.pay.Crawl = DefaultCrawl
	}
	c.minFreshness = min(positiveOr(opts.MinFreshness, DefaultMinFreshness), c.freshness)
	c.maxBackoff = min(positiveOr(opts.MaxBackoff, DefaultMaxBackoff), c.freshness)
	c.minBackoff = min(c.minBackoff, c.maxBackoff)
	if c.maxOrigins <= 0 {
		c.maxOrigins = DefaultMaxOrigins
	}
	if c.maxRobotsBytes <= 0 {
		c.maxRobotsBytes = DefaultMaxRobotsBytes
	}
	if len(c.tokens) == 0 {
		if tok := policy.ProductToken(opts.UserAgent); tok != "" {
			c.tokens = []string{tok}
		}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	} else {
		c.logger = slog.New(safeHandler{c.logger.Handler()})
	}
	if c.invalid != nil {
		c.logger.Error("robots: every request fails until Options are corrected", "error", c.invalid)
	}
	return c
}

// checkIdentity returns the error of a UserAgent that net/http would
// refuse to send, which would fail every robots.txt fetch, or of an
// Agents entry that no group can name, which would leave the crawler
// under the "*" groups without a word.
func (o Options) checkIdentity() error {
	if !httpguts.ValidHeaderFieldValue(o.UserAgent) {
		return fmt.Errorf("robots: Options.UserAgent %q holds a character no header may carry", o.UserAgent)
	}
	for _, a := range o.Agents {
		tok := policy.ProductToken(a)
		if a == "*" || a != "" && tok == a {
			continue
		}
		err := fmt.Errorf("robots: Options.Agents entry %q is not a product token: use letters, digits, \"-\" and \"_\" (RFC 9309 section 2.2.1)", a)
		if tok != "" {
			err = fmt.Errorf("%w, such as %q", err, tok)
		}
		return err
	}
	return nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// positiveOr returns v, or def when v is zero or negative.
func positiveOr(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// sleep waits for d or until ctx is done, on a real timer: the default
// Options.Sleep.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// safeHandler is the handler of Options.Logger, recovering its panics: a
// broken Logger must not take a robots.txt fetch, or the process, down
// with it. A record whose handling panics is dropped.
type safeHandler struct{ h slog.Handler }

func (s safeHandler) Enabled(ctx context.Context, level slog.Level) (enabled bool) {
	defer func() {
		if recover() != nil {
			enabled = false
		}
	}()
	return s.h.Enabled(ctx, level)
}

func (s safeHandler) Handle(ctx context.Context, r slog.Record) (err error) {
	defer func() { recover() }()
	return s.h.Handle(ctx, r)
}

func (s safeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return safeHandler{s.h.WithAttrs(attrs)}
}

func (s safeHandler) WithGroup(name string) slog.Handler {
	return safeHandler{s.h.WithGroup(name)}
}
