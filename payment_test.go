package robots

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// chargingSite is a site that speaks Cloudflare's pay per crawl: each
// path of prices costs its price, and is answered 402 with crawler-price
// unless the request offers it (crawler-exact-price equal to it, or
// crawler-max-price at least it), then 200 with crawler-charged. The
// always-free paths and robots.txt are free. codes answers a path with a
// crawler-error instead. It records every request.
type chargingSite struct {
	prices map[string]string
	codes  map[string]struct {
		status int
		code   string
	}

	mu      sync.Mutex
	seen    []seenRequest
	charged map[string]int // charges per path
}

// seenRequest is a request as the site saw it: path and price headers.
type seenRequest struct {
	path, exact, maxPrice string
}

func newChargingSite(prices map[string]string) *chargingSite {
	return &chargingSite{prices: prices, charged: map[string]int{}, codes: map[string]struct {
		status int
		code   string
	}{}}
}

func (s *chargingSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	exact, maxPrice := r.Header.Get("Crawler-Exact-Price"), r.Header.Get("Crawler-Max-Price")
	s.mu.Lock()
	s.seen = append(s.seen, seenRequest{r.URL.Path, exact, maxPrice})
	s.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, allowAll)
		return
	}
	if c, ok := s.codes[r.URL.Path]; ok {
		w.Header().Set("Crawler-Error", c.code)
		w.WriteHeader(c.status)
		return
	}
	price, ok := s.prices[r.URL.Path]
	if !ok && !freePaths[r.URL.Path] {
		io.WriteString(w, "free")
		return
	}
	if freePaths[r.URL.Path] {
		// A misconfigured site asking a price for a free path: the
		// crawler must not offer one.
		price = "USD 0.01"
	}
	want := MustParsePrice(price)
	switch {
	case exact != "" && exact == price, maxPrice != "" && MustParsePrice(maxPrice).Micros >= want.Micros:
		s.mu.Lock()
		s.charged[r.URL.Path]++
		s.mu.Unlock()
		w.Header().Set("Crawler-Charged", price)
		io.WriteString(w, "paid page")
	case exact != "":
		w.Header().Set("Crawler-Error", "InvalidCrawlerExactPrice")
		fallthrough
	default:
		w.Header().Set("Crawler-Price", price)
		w.WriteHeader(http.StatusPaymentRequired)
	}
}

// requests returns the requests the site saw for path.
func (s *chargingSite) requests(path string) []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []seenRequest
	for _, r := range s.seen {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func payingTransport(t *testing.T, site http.Handler, pay Payment) (*Transport, string) {
	t.Helper()
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return NewTransport(srv.Client().Transport, Options{UserAgent: "PayBot/1.0", MinDelay: -1, Payment: pay}), srv.URL
}

func fetchBody(t *testing.T, tr http.RoundTripper, u string) (string, error) {
	t.Helper()
	// A generous ceiling: only a transport that loops reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), nil
}

var testPayment = Payment{MaxPrice: MustParsePrice("USD 0.05"), Budget: MustParsePrice("USD 1")}

func TestPaymentPaysAPriceWithinTheLimitOnce(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.02"})
	tr, base := payingTransport(t, site, testPayment)

	if body, err := fetchBody(t, tr, base+"/a"); err != nil || body != "paid page" {
		t.Fatalf("GET /a = %q, %v; want the paid page", body, err)
	}
	if got := site.requests("/a"); len(got) != 2 || got[0] != (seenRequest{path: "/a"}) || got[1] != (seenRequest{path: "/a", exact: "USD 0.01"}) {
		t.Errorf("the site saw %+v; want one request without a price, then one with crawler-exact-price: USD 0.01", got)
	}
	// The origin is known to charge now: the next page offers the limit
	// up front and costs one request.
	if body, err := fetchBody(t, tr, base+"/b"); err != nil || body != "paid page" {
		t.Fatalf("GET /b = %q, %v; want the paid page", body, err)
	}
	if got := site.requests("/b"); len(got) != 1 || got[0].maxPrice != "USD 0.05" {
		t.Errorf("the site saw %+v; want one request offering crawler-max-price: USD 0.05", got)
	}
	st := tr.Stats()
	if st.Charged != 2 || st.Spent != MustParsePrice("USD 0.03") || st.PriceRefused != 0 {
		t.Errorf("Stats: Charged %d, Spent %v, PriceRefused %d; want 2, USD 0.03, 0", st.Charged, st.Spent, st.PriceRefused)
	}
	// A URL is paid once in a crawl: asked again, it is refused unsent.
	n := len(site.requests("/a"))
	_, err := fetchBody(t, tr, base+"/a")
	var pe *PaymentError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPaymentRequired) || pe.Reason != reasonPaid {
		t.Errorf("GET /a again: %v; want a *PaymentError saying it was paid", err)
	}
	if len(site.requests("/a")) != n {
		t.Error("a URL paid in the crawl went out again")
	}
}

func TestPaymentRefusesUnsentWhatItCannotPay(t *testing.T) {
	site := newChargingSite(map[string]string{"/dear": "USD 0.10", "/yen": "JPY 1", "/p1": "USD 0.04", "/p2": "USD 0.04", "/p3": "USD 0.04"})
	tests := []struct {
		name, path string
		pay        Payment
		reason     string
		price      string
	}{
		{"over the limit", "/dear", testPayment, reasonOverLimit, "USD 0.10"},
		{"another currency", "/yen", testPayment, reasonCurrency, "JPY 1.00"},
		{"no payment configured", "/p1", Payment{}, reasonNoPayment, "USD 0.04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, base := payingTransport(t, site, tt.pay)
			before := len(site.requests(tt.path))
			_, err := fetchBody(t, tr, base+tt.path)
			var pe *PaymentError
			if !errors.As(err, &pe) || !errors.Is(err, ErrPaymentRequired) {
				t.Fatalf("GET %s: %v; want a *PaymentError", tt.path, err)
			}
			if pe.Reason != tt.reason || pe.Price.String() != tt.price || pe.URL != base+tt.path || pe.Left != (Price{}) {
				t.Errorf("PaymentError %+v; want reason %q, price %s, and no budget left told: none was asked", pe, tt.reason, tt.price)
			}
			if got := site.requests(tt.path)[before:]; len(got) != 1 || got[0].exact != "" || got[0].maxPrice != "" {
				t.Errorf("the site saw %+v; want the one unpriced request, no paid one", got)
			}
			if tr.Stats().PriceRefused != 1 {
				t.Errorf("Stats.PriceRefused = %d, want 1", tr.Stats().PriceRefused)
			}
		})
	}
	t.Run("past the budget", func(t *testing.T) {
		pay := Payment{MaxPrice: MustParsePrice("USD 0.05"), Budget: MustParsePrice("USD 0.08")}
		tr, base := payingTransport(t, site, pay)
		for _, p := range []string{"/p1", "/p2"} {
			if _, err := fetchBody(t, tr, base+p); err != nil {
				t.Fatalf("GET %s: %v", p, err)
			}
		}
		n := len(site.requests("/p3"))
		_, err := fetchBody(t, tr, base+"/p3")
		var pe *PaymentError
		if !errors.As(err, &pe) || pe.Reason != reasonBudget || pe.Left != (Price{"USD", 0}) {
			t.Fatalf("GET /p3 with the budget spent: %v; want a *PaymentError for the budget, none left", err)
		}
		if len(site.requests("/p3")) != n {
			t.Error("a request the budget cannot pay went out: the origin is known to charge, so it is refused unsent")
		}
		if st := tr.Stats(); st.Spent != MustParsePrice("USD 0.08") {
			t.Errorf("Spent %v, want the budget, USD 0.08", st.Spent)
		}
	})
}

func TestPaymentNeverOffersAPriceForFreePaths(t *testing.T) {
	site := newChargingSite(map[string]string{"/page": "USD 0.01"})
	tr, base := payingTransport(t, site, testPayment)
	if _, err := fetchBody(t, tr, base+"/page"); err != nil { // the origin is known to charge
		t.Fatal(err)
	}
	for p := range freePaths {
		_, err := fetchBody(t, tr, base+p)
		var pe *PaymentError
		if p != "/robots.txt" && (!errors.As(err, &pe) || pe.Reason != reasonFree || pe.Left != (Price{})) {
			t.Errorf("GET %s answered 402: %v; want a *PaymentError saying the path is free, and no budget left told", p, err)
		}
		for _, r := range site.requests(p) {
			if r.exact != "" || r.maxPrice != "" {
				t.Errorf("%s went out offering a price: %+v", p, r)
			}
		}
	}
	if st := tr.Stats(); st.Charged != 1 {
		t.Errorf("Stats.Charged = %d, want the page's one", st.Charged)
	}
}

// TestPaymentHeadersAreCanonical guards the header names read as map
// keys, without Get's canonicalisation: one spelt otherwise would never
// be found.
func TestPaymentHeadersAreCanonical(t *testing.T) {
	for _, k := range []string{headerPrice, headerExactPrice, headerMaxPrice, headerCharged, headerError, headerPaymentRequired, headerPaymentSignature, headerPaymentResponse} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header %q is read as a map key; its canonical form is %q", k, c)
		}
	}
}

// TestPaymentReadsSuccessesOnlyForAPayment holds the two readings a
// success skips: a crawler-error there is no refusal (the code comes with
// an error response), and a charge for a request that offered no price
// is not counted, with a Payment or without: the crawler agreed to none,
// and a site that says otherwise would spend the budget at will.
func TestPaymentReadsSuccessesOnlyForAPayment(t *testing.T) {
	tests := []struct {
		name        string
		pay         Payment
		header      string
		wantCharged int64
	}{
		{"crawler-error, paying", testPayment, "Crawler-Error", 0},
		{"crawler-error, no payment", Payment{}, "Crawler-Error", 0},
		{"charged, paying", testPayment, "Crawler-Charged", 0},
		{"charged, no payment", Payment{}, "Crawler-Charged", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := map[string]string{"Crawler-Error": "InternalError", "Crawler-Charged": "USD 0.01"}[tt.header]
			site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/robots.txt" {
					w.Header().Set(tt.header, value)
				}
				io.WriteString(w, "page")
			})
			tr, base := payingTransport(t, site, tt.pay)
			for range 2 { // a back-off would refuse the second
				if body, err := fetchBody(t, tr, base+"/page"); err != nil || body != "page" {
					t.Fatalf("GET answered 200 with %s: %q, %v; want the page", tt.header, body, err)
				}
			}
			if st := tr.Stats(); st.Charged != 2*tt.wantCharged || st.PriceRefused != 0 {
				t.Errorf("Stats.Charged = %d, PriceRefused = %d; want %d and 0", st.Charged, st.PriceRefused, 2*tt.wantCharged)
			}
		})
	}
}

// TestPaymentRefusalLogsThePriceNamed: a refusal logs the price asked,
// and none where no price was named (a site's error code), rather than a
// zero price with no currency.
func TestPaymentRefusalLogsThePriceNamed(t *testing.T) {
	for _, tc := range []struct {
		name, price, code string
		want, never       string
	}{
		{"a price past the limit", "USD 5.00", "", `price="USD 5.00"`, "code="},
		{"a site's error code", "", "CrawlerForbidden", "code=CrawlerForbidden", "price="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					io.WriteString(w, allowAll)
					return
				}
				if tc.price != "" {
					w.Header().Set("Crawler-Price", tc.price)
					w.WriteHeader(http.StatusPaymentRequired)
					return
				}
				w.Header().Set("Crawler-Error", tc.code)
				w.WriteHeader(http.StatusForbidden)
			})
			srv := httptest.NewServer(site)
			defer srv.Close()
			var mu sync.Mutex
			var logs strings.Builder
			tr := NewTransport(srv.Client().Transport, Options{UserAgent: "PayBot/1.0", MinDelay: -1, Payment: testPayment,
				Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
			if _, err := fetchBody(t, tr, srv.URL+"/page"); !errors.Is(err, ErrPaymentRequired) {
				t.Fatalf("GET: %v, want a *PaymentError", err)
			}
			mu.Lock()
			defer mu.Unlock()
			var line string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "request not paid") {
					line = l
				}
			}
			if !strings.Contains(line, tc.want) || strings.Contains(line, tc.never) {
				t.Errorf("logged %q; want %s in it and no %s", line, tc.want, tc.never)
			}
		})
	}
}

// askedPrice answers what a site that charges price for every page
// answers before it is offered one: robots.txt (all allowed), and a 402
// naming price for a request with no price header. It reports whether
// it answered.
func askedPrice(w http.ResponseWriter, r *http.Request, price string) bool {
	switch {
	case r.URL.Path == "/robots.txt":
		io.WriteString(w, allowAll)
	case r.Header.Get("Crawler-Exact-Price") == "" && r.Header.Get("Crawler-Max-Price") == "":
		w.Header().Set("Crawler-Price", price)
		w.WriteHeader(http.StatusPaymentRequired)
	default:
		return false
	}
	return true
}

// TestPaymentChargeBeyondTheOfferCountsTheOffer: a site that charges
// more than the price offered has the offer counted, all the crawler
// agreed to, so that one site cannot spend the budget past it.
func TestPaymentChargeBeyondTheOfferCountsTheOffer(t *testing.T) {
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if askedPrice(w, r, "USD 0.01") {
			return
		}
		w.Header().Set("Crawler-Charged", "USD 9.00")
		io.WriteString(w, "page")
	})
	pay := Payment{MaxPrice: MustParsePrice("USD 0.01"), Budget: MustParsePrice("USD 0.02")}
	tr, base := payingTransport(t, site, pay)
	for _, p := range []string{"/a", "/b"} {
		if body, err := fetchBody(t, tr, base+p); err != nil || body != "page" {
			t.Fatalf("GET %s: %q, %v; want the page, the budget paying both", p, body, err)
		}
	}
	if st := tr.Stats(); st.Charged != 2 || st.Spent != MustParsePrice("USD 0.02") {
		t.Errorf("Stats: Charged %d, Spent %v; want 2 and USD 0.02, the prices offered", st.Charged, st.Spent)
	}
}

func TestPaymentMapsEveryCrawlerError(t *testing.T) {
	tests := []struct {
		code    string
		status  int
		backOff bool
	}{
		{"CrawlerForbidden", http.StatusForbidden, false},
		{"StrongAuthRequired", http.StatusBadRequest, false},
		{"InvalidSignature", http.StatusBadRequest, false},
		{"InvalidCrawlerPriceValue", http.StatusBadRequest, false},
		{"PaymentFailed", http.StatusForbidden, false},
		{"ConflictingPriceHeaders", http.StatusBadRequest, false},
		{"InvalidContentPrice", http.StatusBadGateway, false},
		{"InternalError", http.StatusInternalServerError, true},
		{"SomethingNew", http.StatusBadRequest, false},
	}
	// A transport without a Payment reads a code as one with does: a
	// crawler-error is the site's refusal, whatever the crawler offers.
	for _, tt := range tests {
		for _, pay := range []Payment{testPayment, {}} {
			t.Run(fmt.Sprintf("%s/paying=%v", tt.code, pay.MaxPrice.Micros > 0), func(t *testing.T) {
				site := newChargingSite(nil)
				site.codes["/page"] = struct {
					status int
					code   string
				}{tt.status, tt.code}
				tr, base := payingTransport(t, site, pay)
				_, err := fetchBody(t, tr, base+"/page")
				var pe *PaymentError
				if !errors.As(err, &pe) || pe.Code != tt.code {
					t.Fatalf("GET answered %d with crawler-error %s: %v; want a *PaymentError with the code", tt.status, tt.code, err)
				}
				if got := !pe.RetryAt.IsZero(); got != tt.backOff {
					t.Errorf("RetryAt %v; want a back-off: %v", pe.RetryAt, tt.backOff)
				}
				if len(site.requests("/page")) != 1 {
					t.Errorf("the site saw %d requests; want 1: an error is never answered with another", len(site.requests("/page")))
				}
				if tt.backOff {
					info, _ := tr.NextFree(context.Background(), base+"/other")
					if !info.After(time.Now().Add(500 * time.Millisecond)) {
						t.Errorf("after an InternalError the origin is next free at %v; want it paused a while", info)
					}
				}
			})
		}
	}
}

func TestPaymentOffersPassedThroughUnchanged(t *testing.T) {
	// A 402 that names no price is not pay per crawl: it is a response.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, allowAll)
			return
		}
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, "subscribe")
	}))
	defer srv.Close()
	tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Payment: testPayment})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("a 402 without a price: %v; want the response", err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusPaymentRequired || string(b) != "subscribe" {
		t.Errorf("got %d %q; want the 402 and its body", resp.StatusCode, b)
	}
}

func TestPaymentOptionsThatCannotBeKeptFailEveryRequest(t *testing.T) {
	for _, pay := range []Payment{
		{MaxPrice: MustParsePrice("USD 0.01")},
		{MaxPrice: MustParsePrice("USD 0.01"), Budget: MustParsePrice("EUR 1")},
		{MaxPrice: Price{"usd", 1}, Budget: Price{"usd", 10}},
		{MaxPrice: MustParsePrice("USD 0.01"), Budget: MustParsePrice("USD 1"), Crawl: "two words"},
	} {
		tr := NewTransport(rtFunc(func(*http.Request) (*http.Response, error) {
			t.Fatal("a request went out")
			return nil, nil
		}), Options{Payment: pay})
		req, _ := http.NewRequest(http.MethodGet, "http://site.example/", nil)
		if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "Options.Payment") {
			t.Errorf("Payment %+v: %v; want an error naming Options.Payment", pay, err)
		}
	}
}

// TestPaymentRetryIsPaced checks that the paid request waits for the
// origin's next slot like any request: the 402 was a send.
func TestPaymentRetryIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := newChargingSite(map[string]string{"/a": "USD 0.01"})
		var mu sync.Mutex
		var sends []time.Time
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path != "/robots.txt" {
				mu.Lock()
				sends = append(sends, time.Now())
				mu.Unlock()
			}
			w := httptest.NewRecorder()
			site.ServeHTTP(w, r)
			return w.Result(), nil
		})
		const delay = 3 * time.Second
		tr := NewTransport(base, Options{MinDelay: delay, Payment: testPayment})
		if body, err := fetchBody(t, tr, "http://site.example/a"); err != nil || body != "paid page" {
			t.Fatalf("GET /a = %q, %v", body, err)
		}
		if len(sends) != 2 || sends[1].Sub(sends[0]) < delay {
			t.Errorf("sends at %v; want two, the paid one at least %v after the first", sends, delay)
		}
	})
}

func TestParsePrice(t *testing.T) {
	tests := []struct {
		in   string
		want Price
		str  string
		bad  bool
	}{
		{in: "USD 0.01", want: Price{"USD", 10000}, str: "USD 0.01"},
		{in: "EUR 2", want: Price{"EUR", 2000000}, str: "EUR 2.00"},
		{in: " USD  1.5 ", want: Price{"USD", 1500000}, str: "USD 1.50"},
		{in: "USD 0.000125", want: Price{"USD", 125}, str: "USD 0.000125"},
		{in: "usd 0.01", bad: true},
		{in: "USD", bad: true},
		{in: "USD -1", bad: true},
		{in: "USD 0.0000001", bad: true},
		{in: "USD 1e3", bad: true},
		{in: "USD .5", bad: true},
		{in: "USDX 1", bad: true},
		{in: "USD 99999999999999999999", bad: true},
	}
	for _, tt := range tests {
		got, err := ParsePrice(tt.in)
		switch {
		case tt.bad && err == nil:
			t.Errorf("ParsePrice(%q) = %v; want an error", tt.in, got)
		case !tt.bad && (err != nil || got != tt.want || got.String() != tt.str):
			t.Errorf("ParsePrice(%q) = %v (%q), %v; want %v (%q)", tt.in, got, got.String(), err, tt.want, tt.str)
		}
	}
}

// TestPaymentFleetKeepsOneBudget has 3 transports on one MemoryFleet,
// 8 workers each, crawl 30 priced pages, each twice, with a budget of 10
// prices: together they spend the budget exactly, pay no page twice, and
// refuse the rest with a *PaymentError.
func TestPaymentFleetKeepsOneBudget(t *testing.T) {
	const pages, budget = 30, 10
	prices := map[string]string{}
	for i := range pages {
		prices[fmt.Sprintf("/p%d", i)] = "USD 0.01"
	}
	site := newChargingSite(prices)
	srv := httptest.NewServer(site)
	defer srv.Close()
	fleet := NewMemoryFleet()
	pay := Payment{MaxPrice: MustParsePrice("USD 0.01"), Budget: Price{"USD", budget * 10000}, Crawl: "fleet-test"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, other := 0, []error{}
	var members []*Transport
	for range 3 {
		tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Fleet: fleet, Payment: pay})
		members = append(members, tr)
		for w := range 8 {
			wg.Go(func() {
				for i := range pages {
					_, err := fetchBody(t, tr, fmt.Sprintf("%s/p%d", srv.URL, (i+w)%pages))
					mu.Lock()
					switch {
					case errors.Is(err, ErrPaymentRequired):
						refused++
					case err != nil:
						other = append(other, err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("requests failed otherwise than for their price: %v", other)
	}
	site.mu.Lock()
	charges, paidTwice := 0, 0
	for _, n := range site.charged {
		charges += n
		if n > 1 {
			paidTwice++
		}
	}
	site.mu.Unlock()
	var spent int64
	for _, tr := range members {
		spent += tr.Stats().Spent.Micros
	}
	if charges != budget || paidTwice != 0 || spent != budget*10000 {
		t.Errorf("the fleet was charged %d times (%d pages twice), counted %d µUSD; want %d, none, the budget", charges, paidTwice, spent, budget)
	}
	if refused != 3*8*pages-budget {
		t.Errorf("%d requests refused for their price; want every one but the %d paid", refused, budget)
	}
}

// TestPaymentSendsNothingPaidWhileTheStoreIsDown checks that a fleet
// member whose store cannot answer pays nothing: the budget is the
// fleet's, and this process alone cannot keep it.
func TestPaymentSendsNothingPaidWhileTheStoreIsDown(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01"})
	srv := httptest.NewServer(site)
	defer srv.Close()
	tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Fleet: &failingFleet{}, Payment: testPayment})
	_, err := fetchBody(t, tr, srv.URL+"/a")
	var pe *PaymentError
	if !errors.As(err, &pe) || pe.Reason != reasonStore || !errors.Is(err, errFleetDown) {
		t.Fatalf("GET /a with the store down: %v; want a *PaymentError naming the store's error", err)
	}
	for _, r := range site.requests("/a") {
		if r.exact != "" || r.maxPrice != "" {
			t.Errorf("a paid request went out while the store was down: %+v", r)
		}
	}
}

// x402Site speaks the x402 form of pay per crawl: each path of prices
// (in atomic units of USD, cents) answers 402 with PAYMENT-REQUIRED, an
// exact scheme first and then batch-settlement on cloudflare:402, until
// a request's PAYMENT-SIGNATURE accepts the latter as sent; then 200 with
// PAYMENT-RESPONSE. settle false makes the settlement fail.
type x402Site struct {
	prices  map[string]string
	fail    bool
	network string // of its batch-settlement, if not cloudflare:402
	// errorFirst answers a path's first paid request with its status,
	// the PAYMENT-RESPONSE saying it settled all the same.
	errorFirst map[string]int

	mu      sync.Mutex
	seen    map[string][]string // each path's PAYMENT-SIGNATURE values
	charged map[string]int
}

func (s *x402Site) requirement(path string) map[string]any {
	network := s.network
	if network == "" {
		network = "cloudflare:402"
	}
	return map[string]any{"scheme": "batch-settlement", "network": network, "amount": s.prices[path],
		"asset": "USD", "payTo": "merchant", "maxTimeoutSeconds": 60}
}

func b64JSON(v any) string {
	b, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(b)
}

func (s *x402Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sig := r.Header.Get("Payment-Signature")
	s.mu.Lock()
	s.seen[r.URL.Path] = append(s.seen[r.URL.Path], sig)
	s.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, allowAll)
		return
	}
	if _, ok := s.prices[r.URL.Path]; !ok && !freePaths[r.URL.Path] {
		io.WriteString(w, "free")
		return
	}
	if freePaths[r.URL.Path] {
		s.prices[r.URL.Path] = "1"
	}
	req := s.requirement(r.URL.Path)
	if sig != "" {
		var payload struct {
			Version  int            `json:"x402Version"`
			Accepted map[string]any `json:"accepted"`
		}
		raw, _ := base64.StdEncoding.DecodeString(sig)
		json.Unmarshal(raw, &payload)
		if payload.Version == 2 && fmt.Sprint(payload.Accepted) == fmt.Sprint(req) {
			if s.fail {
				w.Header().Set("Payment-Response", b64JSON(map[string]any{"success": false, "errorReason": "insufficient_funds", "transaction": "", "network": "cloudflare:402"}))
				w.WriteHeader(http.StatusPaymentRequired)
				return
			}
			s.mu.Lock()
			status := s.errorFirst[r.URL.Path]
			delete(s.errorFirst, r.URL.Path)
			if status == 0 {
				s.charged[r.URL.Path]++
			}
			s.mu.Unlock()
			w.Header().Set("Payment-Response", b64JSON(map[string]any{"success": true, "transaction": "tx-1", "network": "cloudflare:402", "amount": s.prices[r.URL.Path]}))
			if status != 0 {
				w.WriteHeader(status)
				return
			}
			io.WriteString(w, "paid page")
			return
		}
	}
	w.Header().Set("Payment-Required", b64JSON(map[string]any{
		"x402Version": 2, "error": "PAYMENT-SIGNATURE header is required",
		"resource": map[string]any{"url": "http://" + r.Host + r.URL.Path},
		"accepts": []any{
			map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "10000", "asset": "0xUSDC", "payTo": "0xabc", "maxTimeoutSeconds": 60},
			req,
		},
	}))
	w.WriteHeader(http.StatusPaymentRequired)
}

// TestPaymentX402 checks the x402 form under the same configuration as
// the header form: a page within the price is fetched once and paid
// once, its charge recorded; one over the limit is refused with nothing
// paid; the free paths are never paid; a failed settlement is refused.
func TestPaymentX402(t *testing.T) {
	site := &x402Site{prices: map[string]string{"/a": "1", "/dear": "10"}, seen: map[string][]string{}, charged: map[string]int{}}
	tr, base := payingTransport(t, site, testPayment)
	if body, err := fetchBody(t, tr, base+"/a"); err != nil || body != "paid page" {
		t.Fatalf("GET /a = %q, %v; want the paid page", body, err)
	}
	if got := site.seen["/a"]; len(got) != 2 || got[0] != "" || got[1] == "" || site.charged["/a"] != 1 {
		t.Errorf("the site saw PAYMENT-SIGNATURE %q and charged %d; want none, then one payment, charged once", got, site.charged["/a"])
	}
	if st := tr.Stats(); st.Charged != 1 || st.Spent != MustParsePrice("USD 0.01") {
		t.Errorf("Stats: Charged %d, Spent %v; want 1, USD 0.01", st.Charged, st.Spent)
	}
	_, err := fetchBody(t, tr, base+"/dear")
	var pe *PaymentError
	if !errors.As(err, &pe) || pe.Reason != reasonOverLimit || pe.Price != MustParsePrice("USD 0.10") {
		t.Errorf("GET /dear: %v; want a *PaymentError over the limit, asked USD 0.10", err)
	}
	if got := site.seen["/dear"]; len(got) != 1 || got[0] != "" {
		t.Errorf("over the limit, the site saw %q; want the one unpaid request", got)
	}
	for p := range freePaths {
		fetchBody(t, tr, base+p)
		for _, sig := range site.seen[p] {
			if sig != "" {
				t.Errorf("%s went out with a payment", p)
			}
		}
	}

	other := &x402Site{prices: map[string]string{"/a": "1"}, seen: map[string][]string{}, charged: map[string]int{}, network: "eip155:8453"}
	tr, base = payingTransport(t, other, testPayment)
	if _, err = fetchBody(t, tr, base+"/a"); !errors.As(err, &pe) || !strings.Contains(pe.Reason, "batch-settlement on eip155:8453") {
		t.Errorf("a 402 offering batch-settlement on another network: %v; want a *PaymentError listing what it offers", err)
	}

	failing := &x402Site{prices: map[string]string{"/a": "1"}, fail: true, seen: map[string][]string{}, charged: map[string]int{}}
	tr, base = payingTransport(t, failing, testPayment)
	_, err = fetchBody(t, tr, base+"/a")
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "insufficient_funds") {
		t.Errorf("a failed settlement: %v; want a *PaymentError naming its reason", err)
	}
	if st := tr.Stats(); st.Charged != 0 || st.Spent.Micros != 0 || len(failing.seen["/a"]) != 2 {
		t.Errorf("a failed settlement: Charged %d, Spent %v, %d requests; want nothing spent, 2 requests", st.Charged, st.Spent, len(failing.seen["/a"]))
	}
}

func TestX402AmountsInTheAssetsUnits(t *testing.T) {
	tests := []struct {
		amount, asset, extra string
		want                 Price
		bad                  bool
	}{
		{amount: "1", asset: "USD", want: Price{"USD", 10000}},
		{amount: "125", asset: "JPY", want: Price{"JPY", 125000000}},
		{amount: "1500", asset: "KWD", want: Price{"KWD", 1500000}},
		{amount: "10000", asset: "USD", extra: `{"decimals":6}`, want: Price{"USD", 10000}},
		{amount: "1", asset: "USD", extra: `{"decimals":9}`, want: Price{"USD", 1}}, // rounded up, never less
		{amount: "-1", asset: "USD", bad: true},
		{amount: "1.5", asset: "USD", bad: true},
		{amount: "1", asset: "0xUSDC", bad: true},
		{amount: "99999999999999999999999", asset: "USD", bad: true},
	}
	for _, tt := range tests {
		r := x402Requirement{Amount: tt.amount, Asset: tt.asset}
		if tt.extra != "" {
			r.Extra = json.RawMessage(tt.extra)
		}
		got, err := r.price()
		if tt.bad != (err != nil) || !tt.bad && got != tt.want {
			t.Errorf("%s %s %s: %v, %v; want %v (error: %v)", tt.amount, tt.asset, tt.extra, got, err, tt.want, tt.bad)
		}
	}
}

// TestPaymentNeverAnswersTwice: a site that asks again after the price
// was offered (its price changed, InvalidCrawlerExactPrice) ends the
// request with a *PaymentError after two requests, never a third.
func TestPaymentNeverAnswersTwice(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, allowAll)
			return
		}
		mu.Lock()
		asked++
		price := fmt.Sprintf("USD 0.0%d", asked)
		mu.Unlock()
		if r.Header.Get("Crawler-Exact-Price") != "" {
			w.Header().Set("Crawler-Error", "InvalidCrawlerExactPrice")
		}
		w.Header().Set("Crawler-Price", price)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Payment: testPayment})
	done := make(chan error, 1)
	go func() { _, err := fetchBody(t, tr, srv.URL+"/page"); done <- err }()
	select {
	case err := <-done:
		var pe *PaymentError
		if !errors.As(err, &pe) || pe.Reason != reasonRefused || pe.Code != "InvalidCrawlerExactPrice" || pe.Left != (Price{}) {
			t.Errorf("GET = %v; want a *PaymentError without a budget left: the site did not take the price offered", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the request never ended: the transport answers 402s without end")
	}
	if asked != 2 {
		t.Errorf("the site was asked %d times; want 2", asked)
	}
}

// TestPaymentErrorResponsesAreNotSpent: a paid request answered with an
// error (or with a charge on an error status) spends nothing: the budget
// of one price still pays the next page, in both forms. Each site answers
// the first paid request of /a with 400 and of /b with 500, saying it
// charged all the same, and the second with the page.
func TestPaymentErrorResponsesAreNotSpent(t *testing.T) {
	firstStatus := map[string]int{"/a": http.StatusBadRequest, "/b": http.StatusInternalServerError}
	var mu sync.Mutex
	failed := map[string]bool{}
	payPerCrawl := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if askedPrice(w, r, "USD 0.01") {
			return
		}
		mu.Lock()
		first := !failed[r.URL.Path]
		failed[r.URL.Path] = true
		mu.Unlock()
		w.Header().Set("Crawler-Charged", "USD 0.01")
		if first {
			w.WriteHeader(firstStatus[r.URL.Path])
			return
		}
		io.WriteString(w, "paid page")
	})
	x402 := &x402Site{prices: map[string]string{"/a": "1", "/b": "1"}, errorFirst: maps.Clone(firstStatus),
		seen: map[string][]string{}, charged: map[string]int{}}
	for _, site := range []struct {
		name string
		h    http.Handler
	}{{"pay per crawl", payPerCrawl}, {"x402", x402}} {
		t.Run(site.name, func(t *testing.T) {
			srv := httptest.NewServer(site.h)
			defer srv.Close()
			pay := Payment{MaxPrice: MustParsePrice("USD 0.01"), Budget: MustParsePrice("USD 0.02")}
			tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Payment: pay, MaxBackoff: time.Millisecond})
			for _, p := range []string{"/a", "/a", "/b", "/b"} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("GET %s: %v", p, err)
				}
				resp.Body.Close()
			}
			if st := tr.Stats(); st.Charged != 2 || st.Spent != MustParsePrice("USD 0.02") {
				t.Errorf("Stats: Charged %d, Spent %v; want the two pages paid, not the errors", st.Charged, st.Spent)
			}
		})
	}
}

// answeringBase is a base that answers every response with another
// request, as a faulty Answerer would.
type answeringBase struct {
	mu    sync.Mutex
	sends int
}

func (b *answeringBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/robots.txt" {
		b.mu.Lock()
		b.sends++
		b.mu.Unlock()
	}
	return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

func (b *answeringBase) Answer(req *http.Request, _ *http.Response) (*http.Request, error) {
	return req.Clone(req.Context()), nil
}

// challengingBase is a site behind a base that answers a signature
// challenge: it asks a price, then challenges the paid request, then
// takes the answer. It records every request's price and answer marks.
type challengingBase struct {
	mu   sync.Mutex
	seen []string
}

func (b *challengingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	if r.URL.Path == "/robots.txt" {
		resp.Body = io.NopCloser(strings.NewReader(allowAll))
		return resp, nil
	}
	price, answer := r.Header.Get("Crawler-Exact-Price"), r.Header.Get("X-Answer")
	b.mu.Lock()
	b.seen = append(b.seen, "price="+price+" answer="+answer)
	b.mu.Unlock()
	switch {
	case answer != "":
	case price != "":
		resp.StatusCode = http.StatusUnauthorized
	default:
		resp.StatusCode = http.StatusPaymentRequired
		resp.Header.Set("Crawler-Price", "USD 0.01")
	}
	return resp, nil
}

func (b *challengingBase) Answer(req *http.Request, resp *http.Response) (*http.Request, error) {
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, nil
	}
	out := req.Clone(req.Context())
	out.Header.Set("X-Answer", "yes")
	return out, nil
}

// TestAnswerCarriesNoPriceSpent: the answer to a challenge of a paid
// request goes out without the price the challenged request offered,
// whose reservation the challenge, an error, gave back.
func TestAnswerCarriesNoPriceSpent(t *testing.T) {
	base := &challengingBase{}
	tr := NewTransport(base, Options{MinDelay: -1, Payment: testPayment})
	if body, err := fetchBody(t, tr, "http://site.example/page"); err != nil {
		t.Fatalf("GET = %q, %v", body, err)
	}
	want := []string{"price= answer=", "price=USD 0.01 answer=", "price= answer=yes"}
	if !slices.Equal(base.seen, want) {
		t.Errorf("the site saw %q; want %q: the answer offers nothing", base.seen, want)
	}
	if st := tr.Stats(); st.Charged != 0 || st.Spent.Micros != 0 {
		t.Errorf("Stats: Charged %d, Spent %v; want nothing spent", st.Charged, st.Spent)
	}
}

// TestAnswererIsHeardOnce: a base that answers its own answer is stopped
// after one, with an error: never a loop.
func TestAnswererIsHeardOnce(t *testing.T) {
	base := &answeringBase{}
	tr := NewTransport(base, Options{MinDelay: -1})
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://site.example/page", nil)
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "its own answer") {
			t.Errorf("RoundTrip = %v; want the error of an answer answered again", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("RoundTrip never ended: an Answerer's answers are followed without end")
	}
	if base.sends != 2 {
		t.Errorf("%d requests sent; want the request and one answer", base.sends)
	}
}

// TestPaymentAnswersThe402Codes: the codes a 402 carries with its price
// are answered as the 402 they come with: MissingCrawlerPrice is paid
// once; InvalidCrawlerMaxPrice, to a price offered up front, and
// InvalidCrawlerExactPrice, to a price offered again, end the request.
func TestPaymentAnswersThe402Codes(t *testing.T) {
	tests := []struct {
		code     string
		upFront  bool // the origin is known to charge: the limit goes up front
		price    string
		paid     bool
		requests int
	}{
		{"MissingCrawlerPrice", false, "USD 0.01", true, 2},
		{"InvalidCrawlerMaxPrice", true, "USD 0.04", false, 1},
		{"InvalidCrawlerExactPrice", false, "USD 0.01", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			var mu sync.Mutex
			requests := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/robots.txt":
					io.WriteString(w, allowAll)
					return
				case r.URL.Path == "/first":
					w.Header().Set("Crawler-Price", "USD 0.01")
					w.WriteHeader(http.StatusPaymentRequired)
					return
				}
				mu.Lock()
				requests++
				mu.Unlock()
				exact, offered := r.Header.Get("Crawler-Exact-Price"), r.Header.Get("Crawler-Max-Price")
				if exact == tt.price && tt.paid {
					w.Header().Set("Crawler-Charged", exact)
					io.WriteString(w, "paid page")
					return
				}
				if exact != "" || offered != "" || tt.code == "MissingCrawlerPrice" {
					w.Header().Set("Crawler-Error", tt.code)
				}
				w.Header().Set("Crawler-Price", tt.price)
				w.WriteHeader(http.StatusPaymentRequired)
			}))
			defer srv.Close()
			pay := Payment{MaxPrice: MustParsePrice("USD 0.05"), Budget: MustParsePrice("USD 0.03")}
			tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Payment: pay})
			if tt.upFront {
				// A 402 elsewhere on the origin: its pages then offer a price up front.
				fetchBody(t, tr, srv.URL+"/first")
			}
			_, err := fetchBody(t, tr, srv.URL+"/page")
			var pe *PaymentError
			switch {
			case tt.paid && err != nil:
				t.Errorf("GET = %v; want the page, paid", err)
			case !tt.paid && (!errors.As(err, &pe) || pe.Code != tt.code):
				t.Errorf("GET = %v; want a *PaymentError with code %s", err, tt.code)
			}
			if requests != tt.requests {
				t.Errorf("the page was requested %d times; want %d", requests, tt.requests)
			}
		})
	}
}

// stallingLedgerFleet is a MemoryFleet whose Reserve, once stall is set,
// answers only when its caller gives up, as a budget store that does not
// answer does.
type stallingLedgerFleet struct {
	*MemoryFleet
	stall atomic.Bool
}

func (f *stallingLedgerFleet) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (Reservation, error) {
	if f.stall.Load() {
		<-ctx.Done()
		return Reservation{}, ctx.Err()
	}
	return f.MemoryFleet.Reserve(ctx, crawl, url, amount, limit)
}

// TestPaymentCallerGivingUpIsNoRefusal checks that a request whose own
// deadline passes while the budget store holds its up-front reservation
// fails with its context's error: it is not refused for its price (no
// *PaymentError, nothing in Stats.PriceRefused), and nothing is sent.
func TestPaymentCallerGivingUpIsNoRefusal(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.01"})
	srv := httptest.NewServer(site)
	defer srv.Close()
	fleet := &stallingLedgerFleet{MemoryFleet: NewMemoryFleet()}
	tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Fleet: fleet, Payment: testPayment})
	// The first page's 402 tells the origin's price: the next request
	// offers it up front.
	if _, err := fetchBody(t, tr, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	fleet.stall.Store(true)
	refused := tr.Stats().PriceRefused
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/b", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if _, ok := errors.AsType[*PaymentError](err); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GET /b past its deadline in the budget store = %v; want its context's error, no *PaymentError", err)
	}
	if got := tr.Stats().PriceRefused; got != refused {
		t.Errorf("Stats().PriceRefused = %d, want %d: a caller giving up is no refusal", got, refused)
	}
	if n := len(site.requests("/b")); n != 0 {
		t.Errorf("%d requests for /b reached the site, want none", n)
	}
}

// ctxLedgerFleet is a MemoryFleet whose Settle fails once its caller's
// context ended, as a store over the network does; each Settle's answer
// is told on settled.
type ctxLedgerFleet struct {
	*MemoryFleet
	settled chan error
}

func (f ctxLedgerFleet) Settle(ctx context.Context, crawl, url string, reserved, charged int64) (err error) {
	defer func() { f.settled <- err }()
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.MemoryFleet.Settle(ctx, crawl, url, reserved, charged)
}

// TestPaymentChargeSettledAfterTheCallerLeft checks that a charge the
// site made is settled in the budget store even when the request's
// context ends as the answer arrives: the page was paid for whatever
// the caller does next, so its charge is spent in the crawl's book.
func TestPaymentChargeSettledAfterTheCallerLeft(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.01"})
	srv := httptest.NewServer(site)
	defer srv.Close()
	fleet := ctxLedgerFleet{NewMemoryFleet(), make(chan error, 2)}
	var cancelB context.CancelFunc
	base := rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err == nil && req.URL.Path == "/b" && resp.StatusCode == http.StatusOK {
			cancelB()
		}
		return resp, err
	})
	tr := NewTransport(base, Options{MinDelay: -1, Fleet: fleet, Payment: testPayment})
	if _, err := fetchBody(t, tr, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, cancelB = context.WithCancel(ctx)
	defer cancelB()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/b", nil)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	// The charges land whether or not the caller waits for them.
	for _, page := range []string{"/a", "/b"} {
		if err := recvWithin(t, fleet.settled, waitCeiling, page+"'s charge to be settled"); err != nil {
			t.Errorf("%s's charge: %v, want it settled", page, err)
		}
	}
	if got := tr.Stats().Spent.Micros; got != 20000 {
		t.Fatalf("Stats().Spent = %d µUSD, want 20000: both pages charged", got)
	}
	// Settled, the crawl's book holds both charges as spent; not settled,
	// /b's reservation is given back and its charge is missing.
	r, err := fleet.MemoryFleet.Reserve(context.Background(), DefaultCrawl+" USD", "http://probe.example/", testPayment.Budget.Micros, testPayment.Budget.Micros)
	if want := testPayment.Budget.Micros - 20000; err != nil || r.Reserved || r.Left != want {
		t.Errorf("the budget's book: %+v, %v; want %d µUSD left: the charge for /b was not settled", r, err, want)
	}
}

// slowLedgerFleet is a MemoryFleet whose Settle and Release answer only
// once release is closed, or with their context's error when it ends
// first, as a budget store that is slow to answer does; each write that
// lands is told on landed.
type slowLedgerFleet struct {
	*MemoryFleet
	release chan struct{}
	landed  chan string
}

func (f *slowLedgerFleet) Settle(ctx context.Context, crawl, url string, reserved, charged int64) error {
	select {
	case <-f.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { f.landed <- "settle" }()
	return f.MemoryFleet.Settle(ctx, crawl, url, reserved, charged)
}

func (f *slowLedgerFleet) Release(ctx context.Context, crawl, url string, reserved int64) error {
	select {
	case <-f.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { f.landed <- "release" }()
	return f.MemoryFleet.Release(ctx, crawl, url, reserved)
}

// TestPaymentLedgerWritesHoldNoRequestPastItsDeadline checks that the
// budget store's writes after a paid request's answer (a charge settled,
// a reservation given back for an error response) hold the request no
// longer than its deadline, and still land once the store answers.
func TestPaymentLedgerWritesHoldNoRequestPastItsDeadline(t *testing.T) {
	for _, tc := range []struct {
		path, write string
		left        int64 // in the budget once the write landed
	}{
		{"/b", "settle", testPayment.Budget.Micros - 20000},
		{"/c", "release", testPayment.Budget.Micros - 10000},
	} {
		t.Run(tc.write, func(t *testing.T) {
			site := newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.01", "/c": "USD 0.01"})
			site.codes["/c"] = struct {
				status int
				code   string
			}{http.StatusInternalServerError, ""}
			srv := httptest.NewServer(site)
			defer srv.Close()
			fleet := &slowLedgerFleet{MemoryFleet: NewMemoryFleet(), release: make(chan struct{}), landed: make(chan string, 4)}
			tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Fleet: fleet, Payment: testPayment, FetchTimeout: time.Hour})
			// /a's 402 tells the origin's price, and its charge is
			// settled at once: the next request offers the price up
			// front.
			close(fleet.release)
			if _, err := fetchBody(t, tr, srv.URL+"/a"); err != nil {
				t.Fatal(err)
			}
			recvWithin(t, fleet.landed, waitCeiling, "/a's charge to be settled")
			fleet.release = make(chan struct{})
			done := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+tc.path, nil)
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			recvWithin(t, done, waitCeiling, "GET "+tc.path+" while the budget store holds its "+tc.write)
			close(fleet.release)
			if got := recvWithin(t, fleet.landed, waitCeiling, "the "+tc.write+" to land"); got != tc.write {
				t.Fatalf("the store's write: %s, want %s", got, tc.write)
			}
			r, err := fleet.MemoryFleet.Reserve(context.Background(), DefaultCrawl+" USD", "http://probe.example/", testPayment.Budget.Micros, testPayment.Budget.Micros)
			if err != nil || r.Reserved || r.Left != tc.left {
				t.Errorf("the budget's book: %+v, %v; want %d µUSD left once the %s landed", r, err, tc.left, tc.write)
			}
		})
	}
}

// lateReserveFleet is a MemoryFleet whose Reserve, once stall is set,
// answers only when answer is closed, as a budget store that answers late
// does; a caller that gives up first gets its context's error, the
// amount set aside all the same (the command reached the store, its
// answer is lost). Each Release that lands is told on released.
type lateReserveFleet struct {
	*MemoryFleet
	stall    atomic.Bool
	answer   chan struct{}
	released chan int64
}

func (f *lateReserveFleet) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (Reservation, error) {
	if f.stall.Load() {
		select {
		case <-f.answer:
		case <-ctx.Done():
			f.MemoryFleet.Reserve(context.WithoutCancel(ctx), crawl, url, amount, limit)
			return Reservation{}, ctx.Err()
		}
	}
	return f.MemoryFleet.Reserve(ctx, crawl, url, amount, limit)
}

func (f *lateReserveFleet) Release(ctx context.Context, crawl, url string, reserved int64) error {
	defer func() { f.released <- reserved }()
	return f.MemoryFleet.Release(ctx, crawl, url, reserved)
}

// TestPaymentReservationMadeAfterItsRequestLeftIsGivenBack checks that a
// budget reservation the store makes after its request's deadline
// passed is given back: the request failed with its context's error and
// sent nothing, so the budget must not keep the amount set aside.
func TestPaymentReservationMadeAfterItsRequestLeftIsGivenBack(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01", "/b": "USD 0.01"})
	srv := httptest.NewServer(site)
	defer srv.Close()
	fleet := &lateReserveFleet{MemoryFleet: NewMemoryFleet(), answer: make(chan struct{}), released: make(chan int64, 4)}
	tr := NewTransport(srv.Client().Transport, Options{MinDelay: -1, Fleet: fleet, Payment: testPayment, FetchTimeout: time.Hour})
	if _, err := fetchBody(t, tr, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	fleet.stall.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/b", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GET /b past its deadline in the budget store = %v; want its context's error", err)
	}
	close(fleet.answer)
	if got := recvWithin(t, fleet.released, waitCeiling, "the late reservation to be given back"); got != testPayment.MaxPrice.Micros {
		t.Errorf("%d µUSD given back, want the %d reserved", got, testPayment.MaxPrice.Micros)
	}
	r, err := fleet.MemoryFleet.Reserve(context.Background(), DefaultCrawl+" USD", "http://probe.example/", testPayment.Budget.Micros, testPayment.Budget.Micros)
	if want := testPayment.Budget.Micros - 10000; err != nil || r.Reserved || r.Left != want {
		t.Errorf("the budget's book: %+v, %v; want %d µUSD left, /a's charge alone", r, err, want)
	}
	if n := len(site.requests("/b")); n != 0 {
		t.Errorf("%d requests for /b reached the site, want none", n)
	}
}

// TestPaymentBodyThatCannotBeReadAgainHoldsNoSlot checks that a request
// whose paid copy cannot get its body (GetBody fails) fails at once,
// before it waits for a politeness slot: the origin's next request goes
// on its own slot, neither held behind a request that will never be sent
// nor a delay after a slot nobody used.
// TestPaymentSendsABodyAgainOnlyIfItCan: a 402 to a request with a body
// is paid only when the body can be read again (GetBody), and the paid
// request carries it whole; otherwise the request is refused, unpaid.
func TestPaymentSendsABodyAgainOnlyIfItCan(t *testing.T) {
	for _, again := range []bool{true, false} {
		t.Run(fmt.Sprintf("GetBody=%v", again), func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			site := newChargingSite(map[string]string{"/form": "USD 0.01"})
			tr, base := payingTransport(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/form" {
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					bodies = append(bodies, string(b))
					mu.Unlock()
				}
				site.ServeHTTP(w, r)
			}), testPayment)
			// A generous ceiling: only a transport that hangs reaches it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/form", strings.NewReader("q=1"))
			if !again {
				req.GetBody = nil
			}
			resp, err := tr.RoundTrip(req)
			var pe *PaymentError
			switch {
			case again && err != nil:
				t.Fatalf("POST = %v; want the page, paid", err)
			case !again && (!errors.As(err, &pe) || pe.Reason != reasonBody):
				t.Fatalf("POST = %v; want a *PaymentError: the body cannot be sent again", err)
			case err == nil:
				resp.Body.Close()
			}
			want := []string{"q=1"}
			if again {
				want = append(want, "q=1")
			}
			if !slices.Equal(bodies, want) {
				t.Errorf("the site read the bodies %q; want %q", bodies, want)
			}
			if st := tr.Stats(); st.Charged != int64(len(want)-1) {
				t.Errorf("Stats.Charged = %d, want %d", st.Charged, len(want)-1)
			}
		})
	}
}

func TestPaymentBodyThatCannotBeReadAgainHoldsNoSlot(t *testing.T) {
	for _, fleet := range []bool{false, true} {
		t.Run(fmt.Sprintf("fleet=%v", fleet), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { bodyGoneHoldsNoSlot(t, fleet) })
		})
	}
}

// bodyGoneHoldsNoSlot is TestPaymentBodyThatCannotBeReadAgainHoldsNoSlot
// on the process's own pace, or a fleet's.
func bodyGoneHoldsNoSlot(t *testing.T, fleet bool) {
	const delay = time.Second
	site := newFakeSite(serve(404, ""))
	site.setPages(newChargingSite(map[string]string{"/a": "USD 0.01", "/form": "USD 0.01", "/b": "USD 0.01"}).ServeHTTP)
	opts := Options{MinDelay: delay, Payment: testPayment}
	if fleet {
		opts.Fleet = NewMemoryFleet()
	}
	tr := newBubbleTransport(site, opts)
	// The origin asks a price, paid a delay later: its requests offer
	// one up front from now on.
	if _, err := bubbleGet(t, tr, "http://site.example/a"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, "http://site.example/form", strings.NewReader("q=1"))
	req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("body gone") }
	if _, err := bubbleRoundTrip(t, tr, req); err == nil || !strings.Contains(err.Error(), "body gone") {
		t.Fatalf("a paid request without its body: %v; want the body's error", err)
	}
	if d := time.Since(start); d != 0 {
		t.Errorf("the request without its body failed %v later, want at once, before its slot", d)
	}
	if _, err := bubbleGet(t, tr, "http://site.example/b"); err != nil {
		t.Fatalf("the next request to the origin: %v; want it sent at its slot", err)
	}
	paid := site.hitsWhere(func(h hit) bool { return h.url == "http://site.example/a" })
	// A store slot lasts its spread (half a millisecond at least) more.
	if d := site.hitOf(t, "http://site.example/b").at.Sub(paid[len(paid)-1].at); d < delay || d > delay+delay/10 {
		t.Errorf("the next request reached the site %v after the last, want a delay", d)
	}
	if n := len(site.hitsWhere(func(h hit) bool { return h.url == "http://site.example/form" })); n != 0 {
		t.Errorf("%d requests without their body reached the site", n)
	}
}

// TestPaymentPaidRequestIsSentOnce: a site that charges a paid request
// and drops its connection before answering is charged once. net/http
// sends a GET again, unseen, when a reused connection fails so, and the
// paid request goes out on the connection the 402 came on (offered
// after it) or the one earlier pages used (offered up front).
func TestPaymentPaidRequestIsSentOnce(t *testing.T) {
	for _, tc := range []struct{ upFront, body bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("upFront=%v,body=%v", tc.upFront, tc.body), func(t *testing.T) {
			site := newChargingSite(map[string]string{"/first": "USD 0.01", "/drop": "USD 0.01"})
			var charged atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				offered := r.Header.Get("Crawler-Exact-Price") != "" || r.Header.Get("Crawler-Max-Price") != ""
				if r.URL.Path != "/drop" || !offered {
					site.ServeHTTP(w, r)
					return
				}
				charged.Add(1)
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			}))
			defer srv.Close()
			tr := NewTransport(srv.Client().Transport, Options{UserAgent: "PayBot/1.0", MinDelay: -1, Payment: testPayment})
			if tc.upFront {
				if _, err := fetchBody(t, tr, srv.URL+"/first"); err != nil {
					t.Fatalf("GET /first: %v", err)
				}
			}
			var body io.Reader
			if tc.body {
				// A body net/http could have again (GetBody).
				body = strings.NewReader("q=1")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/drop", body)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
				t.Fatal("GET /drop answered; want the dropped connection's error")
			}
			if n := charged.Load(); n != 1 {
				t.Errorf("the site was sent the paid request %d times; want once", n)
			}
			// The reservation stays (the site may have charged): the URL
			// is not paid again.
			var pe *PaymentError
			if _, err := fetchBody(t, tr, srv.URL+"/drop"); !errors.As(err, &pe) || pe.Reason != reasonPaid {
				t.Errorf("GET /drop again: %v; want a *PaymentError saying it was paid", err)
			}
			if n := charged.Load(); n != 1 {
				t.Errorf("the site was sent the paid request %d times in all; want once", n)
			}
		})
	}
}

// TestPaymentOnePagePaidOnceHoweverSpelled: the ledger names a page as
// its server receives it, so that a link with a fragment, another case
// of the host or the default port written out is not paid again.
func TestPaymentOnePagePaidOnceHoweverSpelled(t *testing.T) {
	site := newChargingSite(map[string]string{"/a": "USD 0.01"})
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		// The request as a server reads its request-target.
		served := r.Clone(r.Context())
		served.URL, _ = url.ParseRequestURI(r.URL.RequestURI())
		rec := httptest.NewRecorder()
		site.ServeHTTP(rec, served)
		return rec.Result(), nil
	})
	tr := NewTransport(base, Options{UserAgent: "PayBot/1.0", MinDelay: -1, Payment: testPayment})
	if _, err := fetchBody(t, tr, "http://shop.example/a"); err != nil {
		t.Fatalf("GET /a: %v", err)
	}
	for _, u := range []string{"http://shop.example/a#part-2", "http://SHOP.Example/a", "http://shop.example:80/a"} {
		var pe *PaymentError
		if _, err := fetchBody(t, tr, u); !errors.As(err, &pe) || pe.Reason != reasonPaid {
			t.Errorf("GET %s: %v; want a *PaymentError saying it was paid", u, err)
		}
	}
	// A free path spelled as an Opaque URL is offered no price.
	var pe *PaymentError
	before := len(site.requests("/sitemap.xml"))
	free := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: "shop.example", Opaque: "/sitemap.xml"}, Header: http.Header{}}
	// (This site asks a price even there, which is refused.)
	if _, err := tr.RoundTrip(free); !errors.As(err, &pe) || pe.Reason != reasonFree {
		t.Errorf("GET Opaque /sitemap.xml: %v; want a *PaymentError saying the path is free", err)
	}
	if got := site.requests("/sitemap.xml"); len(got) != before+1 || got[len(got)-1].maxPrice != "" || got[len(got)-1].exact != "" {
		t.Errorf("the site saw %+v for /sitemap.xml; want one request offering no price", got)
	}
	// The absolute form net/http sends an Opaque "//host/path" in.
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: "shop.example", Opaque: "//shop.example/a"}, Header: http.Header{}}
	if _, err := tr.RoundTrip(req); !errors.As(err, &pe) || pe.Reason != reasonPaid {
		t.Errorf("GET with Opaque //shop.example/a: %v; want a *PaymentError saying it was paid", err)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	if n := site.charged["/a"]; n != 1 {
		t.Errorf("/a charged %d times; want once", n)
	}
}

// answerKey marks a request as the answer to a challenge in its context,
// as a signer keeps the challenge it answers there.
type answerKey struct{}

// TestPaymentAnswerKeepsItsContext: at an origin that charges, the
// answer to a challenge goes out with the context its Answerer gave it
// (for the signer, the challenge it answers), price offered up front.
func TestPaymentAnswerKeepsItsContext(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	base := &ctxChallengingBase{seen: func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}}
	tr := NewTransport(base, Options{MinDelay: -1, Payment: testPayment})
	if _, err := fetchBody(t, tr, "http://site.example/free-of-challenge"); err != nil {
		t.Fatalf("GET the first page: %v", err)
	}
	if body, err := fetchBody(t, tr, "http://site.example/page"); err != nil || body != "answered" {
		t.Fatalf("GET /page = %q, %v; want its answer answered", body, err)
	}
	want := []string{
		"/free-of-challenge price=none answer=false",
		"/free-of-challenge price=exact answer=false",
		"/page price=max answer=false",
		"/page price=max answer=true",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("the site saw %q; want %q", seen, want)
	}
}

// ctxChallengingBase asks a price of a request offering none, challenges
// a paid /page, and takes an answer marked in its context.
type ctxChallengingBase struct{ seen func(string) }

func (b *ctxChallengingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	if r.URL.Path == "/robots.txt" {
		resp.Body = io.NopCloser(strings.NewReader(allowAll))
		return resp, nil
	}
	price := "none"
	switch {
	case r.Header.Get("Crawler-Exact-Price") != "":
		price = "exact"
	case r.Header.Get("Crawler-Max-Price") != "":
		price = "max"
	}
	answer := r.Context().Value(answerKey{}) != nil
	b.seen(fmt.Sprintf("%s price=%s answer=%v", r.URL.Path, price, answer))
	switch {
	case price == "none":
		resp.StatusCode = http.StatusPaymentRequired
		resp.Header.Set("Crawler-Price", "USD 0.01")
	case r.URL.Path == "/page" && !answer:
		resp.StatusCode = http.StatusUnauthorized
	default:
		resp.Header.Set("Crawler-Charged", "USD 0.01")
		resp.Body = io.NopCloser(strings.NewReader("answered"))
	}
	return resp, nil
}

func (b *ctxChallengingBase) Answer(req *http.Request, resp *http.Response) (*http.Request, error) {
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, nil
	}
	if req.Context().Value(answerKey{}) != nil {
		return nil, errors.New("the answer was challenged again")
	}
	return req.Clone(context.WithValue(req.Context(), answerKey{}, true)), nil
}

// TestUnrepeatable: only a request net/http would send again once it was
// written, and may carry a body (a GET, HEAD or OPTIONS without an
// Idempotency-Key),
// gets a body it cannot rewind; any other goes as it is.
func TestUnrepeatable(t *testing.T) {
	for _, tc := range []struct {
		method, key string
		body        bool
		changed     bool
	}{
		{"", "", false, true},
		{http.MethodGet, "", false, true},
		{http.MethodGet, "", true, true},
		{http.MethodHead, "", false, true},
		{http.MethodTrace, "", false, false},
		{http.MethodGet, "k1", false, false},
		{http.MethodPost, "", true, false},
		{http.MethodPost, "", false, false},
	} {
		var body io.Reader
		if tc.body {
			body = strings.NewReader("q=1")
		}
		req, _ := http.NewRequest(tc.method, "http://site.example/p", body)
		req.Method = tc.method
		if tc.key != "" {
			req.Header.Set("Idempotency-Key", tc.key)
		}
		got := unrepeatable(req)
		switch {
		case !tc.changed && got != req:
			t.Errorf("%q key %q body %v: a copy; want the request as it is", tc.method, tc.key, tc.body)
		case tc.changed && (got == req || got.GetBody != nil || got.Body == nil || got.Body == http.NoBody || req.GetBody == nil && tc.body):
			t.Errorf("%q key %q body %v: %+v; want a copy with a body that cannot be rewound", tc.method, tc.key, tc.body, got)
		}
	}
}

// TestPaymentRetryIsOneDecision: a request paid after a 402, then
// challenged and answered, goes round three times and is one decision.
func TestPaymentRetryIsOneDecision(t *testing.T) {
	base := &ctxChallengingBase{seen: func(string) {}}
	tr := NewTransport(base, Options{MinDelay: -1, Payment: testPayment})
	if _, err := fetchBody(t, tr, "http://site.example/page"); err != nil {
		t.Fatal(err)
	}
	if st := tr.Stats(); st.Allowed != 1 || st.Sent != 3 {
		t.Errorf("Allowed %d, Sent %d; want one decision, three sends (the 402, the paid request, the answer)", st.Allowed, st.Sent)
	}
}
