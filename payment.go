package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultCrawl is the crawl a Payment without a Crawl counts under.
const DefaultCrawl = "crawl"

// ErrPaymentRequired is what every request refused for its price matches
// with errors.Is: see PaymentError.
var ErrPaymentRequired = errors.New("robots: payment required")

// Payment is what a crawler pays for pages a site charges for, under
// Cloudflare's pay per crawl: a 402 Payment Required response whose
// crawler-price header names the price. A price within MaxPrice and what
// is left of Budget is paid: the request is sent once more, paced like
// any request, with crawler-exact-price (which a botauth signer covers),
// and the crawler-charged answer is counted as spent. After an origin has
// asked a price once, its requests offer crawler-max-price up front, so
// that a page costs one request. A URL is paid at most once in a crawl.
//
// The budget is kept in the Ledger of Options.Fleet when there is one,
// so that every member of the fleet spends from one budget; otherwise in
// the Transport's memory. While the fleet's store cannot answer, no paid
// request is sent. The always-free paths (/robots.txt, /sitemap.xml,
// /security.txt, /.well-known/security.txt, /crawlers.json) are never
// offered a price, nor is a robots.txt fetch.
type Payment struct {
	// MaxPrice is the most paid for one request. If zero, nothing is
	// paid.
	MaxPrice Price
	// Budget is the most paid in all in the crawl, by this transport or,
	// with a Fleet, by every member that names the same Crawl. It is
	// required with a MaxPrice, in its currency.
	Budget Price
	// Crawl names the crawl: the budget it spends from and within which
	// a URL is paid once. A new Crawl starts a new budget. If empty,
	// DefaultCrawl.
	Crawl string
	// Schemes are the wire forms a 402 is read in, the first that reads
	// it paying. If nil, PayPerCrawl and X402, so that a crawler meets
	// either form of Cloudflare's product with one configuration.
	Schemes []PaymentScheme
}

// check reports a Payment that cannot be kept.
func (p Payment) check() error {
	switch {
	case p.MaxPrice.IsZero() && p.Budget.IsZero():
		return nil
	case p.MaxPrice.Micros <= 0 || !validCurrency(p.MaxPrice.Currency):
		return fmt.Errorf("robots: Options.Payment.MaxPrice %v is not a positive price in an ISO 4217 currency", p.MaxPrice)
	case p.Budget.Currency != p.MaxPrice.Currency || p.Budget.Micros <= 0:
		return fmt.Errorf("robots: Options.Payment.Budget %v is not a positive amount in MaxPrice's currency (%s)", p.Budget, p.MaxPrice.Currency)
	case len(p.Crawl) > 200 || strings.ContainsFunc(p.Crawl, func(r rune) bool { return r < 0x21 || r > 0x7e }):
		return fmt.Errorf("robots: Options.Payment.Crawl %q is not up to 200 printable characters without spaces", p.Crawl)
	}
	return nil
}

// validCurrency reports whether c is three upper-case ASCII letters.
func validCurrency(c string) bool {
	return len(c) == 3 && strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// PaymentError explains why a request that a site charges for was not
// paid: its price is past the limit or the budget, its URL was paid
// already in the crawl, the site answered with a pay-per-crawl error, or
// the budget could not be kept. It matches ErrPaymentRequired. Through an
// http.Client it arrives wrapped in a *url.Error, which errors.As sees
// through.
type PaymentError struct {
	// URL is the request's URL, with any password redacted.
	URL string
	// Price is the price the site asked, zero when the request was
	// refused before the site named one.
	Price Price
	// MaxPrice is the most the transport pays for a request
	// (Payment.MaxPrice).
	MaxPrice Price
	// Left is what was left of the budget when the request was refused.
	Left Price
	// Code is the site's crawler-error code (CrawlerForbidden,
	// InternalError, ...), empty when it sent none.
	Code string
	// Reason says why the transport did not pay, in words.
	Reason string
	// RetryAt is, after an InternalError, when the origin's requests go
	// out again: the transport pauses it, backing off.
	RetryAt time.Time
	// Err is the budget store's error, when it could not answer.
	Err error
}

// Error says what was asked and why it was not paid.
func (e *PaymentError) Error() string {
	var b strings.Builder
	b.WriteString("robots: not paid: ")
	b.WriteString(e.Reason)
	if !e.Price.IsZero() {
		b.WriteString(" (asked ")
		b.WriteString(e.Price.String())
		if !e.MaxPrice.IsZero() {
			b.WriteString(", limit ")
			b.WriteString(e.MaxPrice.String())
		}
		if !e.Left.IsZero() {
			b.WriteString(", budget left ")
			b.WriteString(e.Left.String())
		}
		b.WriteString(")")
	}
	if e.Code != "" {
		b.WriteString("; crawler-error ")
		b.WriteString(e.Code)
	}
	if !e.RetryAt.IsZero() {
		b.WriteString("; retry after ")
		b.WriteString(e.RetryAt.UTC().Format(time.RFC3339))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is ErrPaymentRequired.
func (e *PaymentError) Is(target error) bool { return target == ErrPaymentRequired }

// Unwrap returns the store's error, if any.
func (e *PaymentError) Unwrap() error { return e.Err }

// Why a request was not paid, as PaymentError.Reason says it.
const (
	reasonNoPayment   = "the transport pays nothing (Options.Payment is zero)"
	reasonOverLimit   = "the price is over the limit"
	reasonCurrency    = "the price is in another currency than the limit"
	reasonBudget      = "the price is past what is left of the budget"
	reasonPaid        = "the URL was paid, or is being paid, in this crawl"
	reasonFree        = "the path is always free and is never offered a price"
	reasonStore       = "the budget store cannot answer, and no paid request is sent without it"
	reasonRefused     = "the site did not take the price offered"
	reasonBody        = "the request's body cannot be sent again"
	reasonSiteError   = "the site answered with a pay-per-crawl error"
	reasonSiteBackoff = "the site failed; its requests back off"
)

// Pay-per-crawl headers (Cloudflare's pay per crawl).
const (
	headerPrice      = "Crawler-Price"
	headerExactPrice = "Crawler-Exact-Price"
	headerMaxPrice   = "Crawler-Max-Price"
	headerCharged    = "Crawler-Charged"
	headerError      = "Crawler-Error"
)

// crawlerErrors are the crawler-error codes Cloudflare documents, each
// with whether a later request may fare otherwise (only a server error
// does: the origin then backs off). A 402's codes (MissingCrawlerPrice,
// InvalidCrawlerExactPrice, InvalidCrawlerMaxPrice) come with the price
// and are answered as a 402. An unknown code is final.
var crawlerErrors = map[string]bool{
	"CrawlerForbidden":         false,
	"StrongAuthRequired":       false,
	"InvalidSignature":         false,
	"InvalidCrawlerPriceValue": false,
	"MissingCrawlerPrice":      false,
	"PaymentFailed":            false,
	"InvalidCrawlerExactPrice": false,
	"InvalidCrawlerMaxPrice":   false,
	"ConflictingPriceHeaders":  false,
	"InvalidContentPrice":      false,
	"InternalError":            true,
}

// freePaths are the paths pay per crawl never charges for: they are
// never offered a price.
var freePaths = map[string]bool{
	"/robots.txt":               true,
	"/sitemap.xml":              true,
	"/security.txt":             true,
	"/.well-known/security.txt": true,
	"/crawlers.json":            true,
}

// Backing off an origin that answered InternalError: the first pause,
// doubled for each in a row, up to Options.MaxBackoff.
const payBackoffMin = time.Second

// payer pays for the requests sites charge for, within a Payment, and
// keeps the budget in a Ledger. It is safe for concurrent use.
type payer struct {
	pay    Payment
	crawl  string // the ledger's name of the crawl: Crawl and the currency
	ledger Ledger
	pacer  *pacer
	stats  *counters
	logger *slog.Logger
}

// offer is the price a request goes out with, in its scheme's form, and
// what the ledger holds for it; the zero offer is none.
type offer struct {
	scheme   PaymentScheme
	quote    Quote
	reserved int64 // micros reserved for url
	url      string
}

func (p *payer) init(pay Payment, ledger Ledger, pc *pacer, stats *counters, logger *slog.Logger) {
	p.pay, p.ledger, p.pacer, p.stats, p.logger = pay, ledger, pc, stats, logger
	p.crawl = pay.Crawl + " " + pay.MaxPrice.Currency
	if p.pay.Schemes == nil {
		p.pay.Schemes = []PaymentScheme{PayPerCrawl, X402}
	}
}

// enabled reports whether anything may be paid.
func (p *payer) enabled() bool { return p.pay.MaxPrice.Micros > 0 }

// upFront makes into the offer a request to o's u goes out with, o being
// an origin that asked a price before in pay per crawl's header form
// (admit asks only then): crawler-max-price for what the budget lets the
// request pay, reserved. For a free path, or without a Payment, it
// leaves into as it is.
// It refuses the request when the URL was paid in the crawl, when the
// budget cannot pay the origin's last price, or when the store cannot
// answer; a request whose context ended meanwhile gets its context's
// error instead, which is no refusal.
func (p *payer) upFront(ctx context.Context, o *origin, u *url.URL, into *offer) error {
	if !p.enabled() || freePaths[sentPath(u)] {
		return nil
	}
	key := o.id.urlOf(u)
	amount := p.pay.MaxPrice.Micros
	for try := 0; ; try++ {
		r, err := p.reserve(ctx, key, amount)
		switch {
		case err != nil:
			if gone := CallerGaveUp(ctx); gone != nil {
				// The caller's, not the store's: no refusal.
				return gone
			}
			return p.refuse(u, Price{}, reasonStore, "", err, 0)
		case r.Paid:
			return p.refuse(u, Price{}, reasonPaid, "", nil, r.Left)
		case r.Reserved:
			price := Price{p.pay.MaxPrice.Currency, amount}
			*into = offer{scheme: PayPerCrawl, quote: Quote{Price: price, Header: headerMaxPrice, Value: price.String()}, reserved: amount, url: key}
			return nil
		case try > 0 || r.Left < o.price.Load():
			return p.refuse(u, Price{}, reasonBudget, "", nil, r.Left)
		}
		// Less is left than the limit, but enough for the price the
		// origin asked last: offer what is left.
		amount = r.Left
	}
}

// answer reads the response to a request sent with sent (or none): it
// settles a charge, gives back a reservation the response did not use,
// and for a 402 that names a price, in a scheme of Payment.Schemes,
// within the limit and the budget, makes sent the offer to send the
// request once more with and returns true. A 402 it does not pay, and a
// pay-per-crawl error (crawler-error on an error response), end in a
// *PaymentError, resp's body then closed. Anything else leaves resp to
// the caller.
func (p *payer) answer(ctx context.Context, o *origin, l *line, req *http.Request, resp *http.Response, sent *offer) (bool, error) {
	scheme := sent.scheme
	if scheme == nil {
		if resp.StatusCode < 400 && !p.enabled() {
			// Nothing offered, nothing to pay: the common answer.
			return false, nil
		}
		scheme = PayPerCrawl // a charge made without an offer
	}
	charged, ok, settleErr := scheme.Receipt(resp, sent.quote)
	if ok && sent.scheme == nil {
		// The crawler agreed to no price: nothing was spent, and a site
		// that says otherwise would spend the fleet's budget at will.
		p.logger.Warn("robots: a charge for a request that offered no price is not counted", "url", req.URL.Redacted(), "charged", charged)
		return false, nil
	}
	if ok {
		p.settle(ctx, o, req.URL, sent, charged)
		o.payFailures.Store(0)
		return false, nil
	}
	// An error response, or an answer without a charge, is never
	// counted as spent.
	p.release(ctx, sent)
	// A crawler-error comes with an error response. Every response comes
	// here: the key is read as it is canonical, as Receipt reads the
	// charge, since Get would canonicalise it each time.
	var code string
	if v := resp.Header[headerError]; resp.StatusCode >= 400 && len(v) > 0 {
		code = v[0]
	}
	if resp.StatusCode != http.StatusPaymentRequired && code == "" && settleErr == nil {
		return false, nil
	}
	q, by, err := p.quote(resp)
	if by == nil && code == "" && settleErr == nil {
		return false, nil // a 402 in no form spoken: a response
	}
	drain(resp)
	switch {
	case settleErr != nil:
		return false, p.refuse(req.URL, sent.quote.Price, reasonRefused+": "+settleErr.Error(), code, nil, -1)
	case resp.StatusCode != http.StatusPaymentRequired:
		if retry, known := crawlerErrors[code]; known && retry {
			return false, p.backOff(ctx, o, l, req.URL, code)
		}
		return false, p.refuse(req.URL, Price{}, reasonSiteError, code, nil, -1)
	case err != nil || by == nil:
		reason := reasonSiteError
		if err != nil {
			reason += ": " + err.Error()
		}
		return false, p.refuse(req.URL, Price{}, reason, code, nil, -1)
	}
	price := q.Price
	if by == PayPerCrawl {
		o.price.Store(max(price.Micros, 1))
	}
	switch {
	case sent.scheme != nil:
		return false, p.refuse(req.URL, price, reasonRefused, code, nil, -1)
	case !p.enabled():
		return false, p.refuse(req.URL, price, reasonNoPayment, code, nil, -1)
	case freePaths[sentPath(req.URL)]:
		return false, p.refuse(req.URL, price, reasonFree, code, nil, -1)
	case price.Currency != p.pay.MaxPrice.Currency:
		return false, p.refuse(req.URL, price, reasonCurrency, code, nil, -1)
	case price.Micros > p.pay.MaxPrice.Micros:
		return false, p.refuse(req.URL, price, reasonOverLimit, code, nil, -1)
	case req.Body != nil && req.Body != http.NoBody && req.GetBody == nil:
		return false, p.refuse(req.URL, price, reasonBody, code, nil, -1)
	}
	key := o.id.urlOf(req.URL)
	r, err := p.reserve(ctx, key, price.Micros)
	switch {
	case err != nil:
		if gone := CallerGaveUp(ctx); gone != nil {
			return false, gone // the caller's, not the store's: no refusal
		}
		return false, p.refuse(req.URL, price, reasonStore, code, err, -1)
	case r.Paid:
		return false, p.refuse(req.URL, price, reasonPaid, code, nil, r.Left)
	case !r.Reserved:
		return false, p.refuse(req.URL, price, reasonBudget, code, nil, r.Left)
	}
	*sent = offer{scheme: by, quote: q, reserved: price.Micros, url: key}
	return true, nil
}

// quote reads a 402 in the first of Payment.Schemes that reads it: the
// price, the scheme (nil when none does, or resp is no 402) and the
// error of a 402 in its form that cannot be read.
func (p *payer) quote(resp *http.Response) (Quote, PaymentScheme, error) {
	if resp.StatusCode != http.StatusPaymentRequired {
		return Quote{}, nil, nil
	}
	for _, s := range p.pay.Schemes {
		if q, ok, err := s.Quote(resp); ok {
			return q, s, err
		}
	}
	return Quote{}, nil, nil
}

// release gives back what the ledger holds for an offer not sent.
func (p *payer) release(ctx context.Context, of *offer) {
	if of.reserved == 0 {
		return
	}
	// Copies: of is the caller's, which the write must not keep.
	url, reserved := of.url, of.reserved
	p.land(ctx, url, "robots: budget store cannot give a reservation back; it stays counted", func(ctx context.Context) error {
		return p.ledger.Release(ctx, p.crawl, url, reserved)
	})
}

// settle counts a charge the answer to a request sent with sent made.
func (p *payer) settle(ctx context.Context, o *origin, u *url.URL, sent *offer, price Price) {
	if price.Currency != p.pay.MaxPrice.Currency && p.enabled() {
		p.logger.Warn("robots: a charge in another currency kept as the amount offered", "url", u.Redacted(), "charged", price)
		price = sent.quote.Price
	}
	if sent.reserved > 0 && price.Micros > sent.reserved {
		// What the crawler agreed to is all it can have spent: the budget
		// holds whatever a site writes.
		p.logger.Warn("robots: the site charged more than was offered; counted as offered", "url", u.Redacted(), "charged", price, "offered", sent.quote.Price)
		price.Micros = sent.reserved
	}
	p.stats.charged.Add(1)
	p.stats.spent.Add(price.Micros)
	key := sent.url
	if key == "" {
		key = o.id.urlOf(u)
	}
	reserved, charged := sent.reserved, price.Micros
	p.land(ctx, u.Redacted(), "robots: budget store cannot settle a charge; its reservation stays counted", func(ctx context.Context) error {
		return p.ledger.Settle(ctx, p.crawl, key, reserved, charged)
	})
}

// land writes to the ledger what is to land even when the request that
// made it gave up (a charge, a reservation given back), on the
// transport's own bound: the request waits for it only while its
// context lasts.
func (p *payer) land(ctx context.Context, u, failed string, write func(context.Context) error) {
	whileWaiting(ctx, land(ctx, p.pacer.detachedFor, p.logger, failed, slog.String("url", u), write))
}

// reserve sets amount aside for the URL key in the ledger, on the
// transport's own bound and detached from ctx, which it waits on: a
// reservation the store makes after the request left is given back
// rather than lost to the budget, and a store that does not answer holds
// the request no longer than its context.
func (p *payer) reserve(ctx context.Context, key string, amount int64) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	type answer struct {
		r   Reservation
		err error
	}
	got := make(chan answer) // unbuffered: taken, or left with ctx
	go func() {
		wctx, cancel := detachedFor(ctx, p.pacer.detachedFor)
		r, err := p.ledger.Reserve(wctx, p.crawl, key, amount, p.pay.Budget.Micros)
		cancel()
		select {
		case got <- answer{r, err}:
		case <-ctx.Done():
			if err == nil && r.Reserved {
				<-land(ctx, p.pacer.detachedFor, p.logger, "robots: budget store cannot give back a reservation its request left; it stays counted", slog.String("url", key), func(ctx context.Context) error {
					return p.ledger.Release(ctx, p.crawl, key, amount)
				})
			}
		}
	}()
	select {
	case a := <-got:
		return a.r, a.err
	case <-ctx.Done():
		return Reservation{}, ctx.Err()
	}
}

// backOff pauses o after a pay-per-crawl InternalError, doubling the
// pause for each in a row, at least any Retry-After, at most
// Options.MaxBackoff, and returns the error saying when it ends.
func (p *payer) backOff(ctx context.Context, o *origin, l *line, u *url.URL, code string) error {
	n := min(o.payFailures.Add(1), 30)
	d := min(payBackoffMin<<(n-1), p.pacer.maxPause)
	until := p.pacer.now().Add(d)
	p.pacer.pauseUntil(ctx, l, until, http.StatusInternalServerError)
	e := p.refuse(u, Price{}, reasonSiteBackoff, code, nil, -1).(*PaymentError)
	e.RetryAt = until
	return e
}

// refuse counts and returns the *PaymentError of a request to u not paid
// for reason; left is the budget left, -1 when not known.
func (p *payer) refuse(u *url.URL, price Price, reason, code string, err error, left int64) error {
	p.stats.priceRefused.Add(1)
	e := &PaymentError{URL: u.Redacted(), Price: price, MaxPrice: p.pay.MaxPrice, Code: code, Reason: reason, Err: err}
	if left >= 0 {
		e.Left = Price{p.pay.MaxPrice.Currency, left}
	}
	attrs := []any{"url", e.URL, "reason", reason}
	if price != (Price{}) {
		attrs = append(attrs, "price", price) // none before a price was named
	}
	if code != "" {
		attrs = append(attrs, "code", code)
	}
	p.logger.Info("robots: request not paid", attrs...)
	return e
}

// withOffer returns out carrying of's price header, a clone when it
// needs one; out itself for no offer.
func withOffer(req, out *http.Request, of *offer) (*http.Request, error) {
	if of.scheme == nil {
		return out, nil
	}
	// out's context, not the caller's: an answer to a challenge carries
	// the challenge there, for the signer to answer it as asked.
	c := out.Clone(out.Context())
	if c.Header == nil {
		c.Header = make(http.Header)
	}
	c.Header.Del(headerExactPrice)
	c.Header.Del(headerMaxPrice)
	c.Header.Del(headerPaymentSignature)
	c.Header.Set(of.quote.Header, of.quote.Value)
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("robots: request body for the paid request: %w", err)
		}
		c.Body = body
	}
	return c, nil
}

// unrepeatable returns the paid request out as the base is to send it:
// net/http sends a GET, HEAD or OPTIONS again, unseen by its
// caller, when a reused connection fails before the answer begins, and
// the site may have charged the first. A copy with a body net/http
// cannot rewind is one it never sends again (an empty one goes out as no
// body over HTTP/1.1, as an empty one over HTTP/2); it then does not
// retry even a request of which nothing was written, which keeps its
// reservation as any paid request without an answer does. A request
// that names an Idempotency-Key, whose site takes a repeat as one, and
// any other method, which net/http repeats only when nothing of it was
// written, go as they are. An Answerer still gets out, whose body can be
// had again.
func unrepeatable(out *http.Request) *http.Request {
	switch out.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		// A TRACE may carry no content at all (RFC 9110 section 9.3.8).
		return out
	}
	if out.Header.Get("Idempotency-Key") != "" || out.Header.Get("X-Idempotency-Key") != "" {
		return out
	}
	c := out.WithContext(out.Context())
	if c.Body == nil || c.Body == http.NoBody {
		c.Body, c.ContentLength = emptyOnce{}, 0
	}
	c.GetBody = nil
	return c
}

// emptyOnce is an empty body that cannot be rewound.
type emptyOnce struct{}

func (emptyOnce) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyOnce) Close() error             { return nil }

// drain reads a little of resp's body, so that its connection may be
// reused, and closes it.
func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}
