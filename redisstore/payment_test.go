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
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// chargingSite speaks Cloudflare's pay per crawl: every page but
// robots.txt costs price, answered 402 with crawler-price until a request
// offers it, then 200 with crawler-charged. It counts each page's charges.
type chargingSite struct {
	price string
	srv   *httptest.Server

	mu      sync.Mutex
	charged map[string]int
}

func newChargingSite(t *testing.T, price string) *chargingSite {
	s := &chargingSite{price: price, charged: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		offered := r.Header.Get("Crawler-Exact-Price")
		if m := r.Header.Get("Crawler-Max-Price"); m != "" {
			if p, err := robots.ParsePrice(m); err == nil && p.Micros >= robots.MustParsePrice(price).Micros {
				offered = price
			}
		}
		if offered != price {
			w.Header().Set("Crawler-Price", price)
			w.WriteHeader(http.StatusPaymentRequired)
			return
		}
		s.mu.Lock()
		s.charged[r.URL.Path]++
		s.mu.Unlock()
		w.Header().Set("Crawler-Charged", price)
		io.WriteString(w, "paid")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// Environment of a worker process of TestFleetBudgetProcesses.
const (
	budgetRedisEnv = "REDISSTORE_BUDGET_REDIS"
	budgetSiteEnv  = "REDISSTORE_BUDGET_SITE"
)

const (
	budgetPages   = 300
	budgetPrices  = 100
	budgetWorkers = 8
	budgetProcs   = 3
)

// TestFleetBudgetProcesses: 8 workers in each of 3 OS processes on one
// Redis crawl 300 priced pages with a budget of 100 prices: together they
// spend the budget exactly, pay no page twice, and refuse every other
// request with a *PaymentError.
func TestFleetBudgetProcesses(t *testing.T) {
	srv := redistest.Start(t)
	site := newChargingSite(t, "USD 0.01")
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid, refused := 0, 0
	for i := range budgetProcs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 5*waitCeiling)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetBudgetWorker$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), budgetRedisEnv+"="+srv.Addr, budgetSiteEnv+"="+site.srv.URL)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("process %d: %v\n%s", i, err, out)
				return
			}
			var p, r int
			for line := range strings.Lines(string(out)) {
				if _, err := fmt.Sscanf(strings.TrimSpace(line), "budget: paid %d refused %d", &p, &r); err == nil {
					mu.Lock()
					paid, refused = paid+p, refused+r
					mu.Unlock()
					return
				}
			}
			t.Errorf("process %d said nothing of what it paid:\n%s", i, out)
		})
	}
	wg.Wait()
	site.mu.Lock()
	defer site.mu.Unlock()
	charges, twice := 0, 0
	for _, n := range site.charged {
		charges += n
		if n > 1 {
			twice++
		}
	}
	if charges != budgetPrices || twice != 0 {
		t.Errorf("the site charged %d times, %d pages more than once; want the budget, %d, and none", charges, twice, budgetPrices)
	}
	if paid != budgetPrices || refused != budgetProcs*budgetWorkers*budgetPages-budgetPrices {
		t.Errorf("the processes paid %d and were refused %d; want %d and the other %d", paid, refused, budgetPrices, budgetProcs*budgetWorkers*budgetPages-budgetPrices)
	}
}

// TestFleetBudgetWorker is one process of TestFleetBudgetProcesses; run by
// itself it has nothing to do.
func TestFleetBudgetWorker(t *testing.T) {
	addr, site := os.Getenv(budgetRedisEnv), os.Getenv(budgetSiteEnv)
	if addr == "" {
		t.Skip("a worker process of TestFleetBudgetProcesses")
	}
	pay := robots.Payment{MaxPrice: robots.MustParsePrice("USD 0.01"), Budget: robots.MustParsePrice("USD " + strconv.Itoa(budgetPrices/100)), Crawl: "budget-test"}
	m := newMember(t, addr, robots.Options{MinDelay: -1, Payment: pay}, redisstore.Options{Timeout: healthyTimeout})
	var mu sync.Mutex
	paid, refused := 0, 0
	var wg sync.WaitGroup
	for w := range budgetWorkers {
		wg.Go(func() {
			for i := range budgetPages {
				resp, err := m.client.Get(fmt.Sprintf("%s/p%d", site, (i*7+w*37)%budgetPages))
				var pe *robots.PaymentError
				switch {
				case err == nil:
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("a page answered %d", resp.StatusCode)
					}
					mu.Lock()
					paid++
					mu.Unlock()
				case errors.As(err, &pe) && errors.Is(err, robots.ErrPaymentRequired):
					mu.Lock()
					refused++
					mu.Unlock()
				default:
					t.Errorf("a request failed otherwise than for its price: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if st := m.store.Stats(); st.Errors != 0 {
		t.Errorf("store stats %+v; want no error", st)
	}
	fmt.Printf("budget: paid %d refused %d\n", paid, refused)
}
