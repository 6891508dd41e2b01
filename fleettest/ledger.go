package fleettest

import (
	"fmt"
	"sync"

	"github.com/crawlkit/robots"
)

// The ledger's cases keep one crawl's budget, in millionths of its
// currency, as robots.Payment spends it.
const crawl = "fleettest USD"

func (c *fleetCase) reserveBudget(crawl, url string, amount, limit int64) robots.Reservation {
	c.Helper()
	r, err := c.f.Reserve(c.ctx(), crawl, url, amount, limit)
	if err != nil {
		c.Fatalf("Reserve(%q, %q, %d, %d): %v", crawl, url, amount, limit, err)
	}
	return r
}

func (c *fleetCase) settle(url string, reserved, charged int64) {
	c.Helper()
	if err := c.f.Settle(c.ctx(), crawl, url, reserved, charged); err != nil {
		c.Fatalf("Settle(%q, %d, %d): %v", url, reserved, charged, err)
	}
}

func (c *fleetCase) release(url string, reserved int64) {
	c.Helper()
	if err := c.f.Release(c.ctx(), crawl, url, reserved); err != nil {
		c.Fatalf("Release(%q, %d): %v", url, reserved, err)
	}
}

// wantReservation checks one answer of Reserve.
func (c *fleetCase) wantReservation(what string, got, want robots.Reservation) {
	c.Helper()
	if got != want {
		c.Errorf("%s: Reserve = %+v, want %+v", what, got, want)
	}
}

var ledgerCases = []testCase{
	{"reservations stop at the limit", func(c *fleetCase) {
		c.wantReservation("first", c.reserveBudget(crawl, "/a", 400, 1000), robots.Reservation{Reserved: true, Left: 600})
		c.wantReservation("second", c.reserveBudget(crawl, "/b", 400, 1000), robots.Reservation{Reserved: true, Left: 200})
		c.wantReservation("past the limit", c.reserveBudget(crawl, "/c", 400, 1000), robots.Reservation{Left: 200})
		c.wantReservation("exactly the rest", c.reserveBudget(crawl, "/c", 200, 1000), robots.Reservation{Reserved: true, Left: 0})
	}},
	{"a URL is paid once in a crawl", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 100, 1000)
		c.wantReservation("while being paid", c.reserveBudget(crawl, "/a", 100, 1000), robots.Reservation{Paid: true, Left: 900})
		c.settle("/a", 100, 100)
		c.wantReservation("once paid", c.reserveBudget(crawl, "/a", 100, 1000), robots.Reservation{Paid: true, Left: 900})
		c.wantReservation("in another crawl", c.reserveBudget("other EUR", "/a", 100, 1000), robots.Reservation{Reserved: true, Left: 900})
	}},
	{"settling spends what was charged, not what was reserved", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 500, 1000)
		c.settle("/a", 500, 300)
		c.wantReservation("after a charge below the reservation", c.reserveBudget(crawl, "/b", 700, 1000), robots.Reservation{Reserved: true, Left: 0})
	}},
	{"a charge without a reservation is spent", func(c *fleetCase) {
		c.settle("/a", 0, 600)
		c.wantReservation("after the charge", c.reserveBudget(crawl, "/b", 500, 1000), robots.Reservation{Left: 400})
		c.wantReservation("the URL charged", c.reserveBudget(crawl, "/a", 100, 1000), robots.Reservation{Paid: true, Left: 400})
	}},
	{"a release gives the amount and the URL back", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 600, 1000)
		c.release("/a", 600)
		c.wantReservation("the URL again", c.reserveBudget(crawl, "/a", 1000, 1000), robots.Reservation{Reserved: true, Left: 0})
	}},
	{"a release after the settle changes nothing", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 600, 1000)
		c.settle("/a", 600, 600)
		c.release("/a", 600)
		c.wantReservation("the URL paid", c.reserveBudget(crawl, "/a", 100, 1000), robots.Reservation{Paid: true, Left: 400})
		c.release("/never", 300)
		c.wantReservation("a URL never reserved, released", c.reserveBudget(crawl, "/b", 500, 1000), robots.Reservation{Left: 400})
	}},
	{"settling a URL not being paid gives nothing back", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 400, 1000)
		c.settle("/z", 400, 0)
		c.wantReservation("with /a's 400 still reserved", c.reserveBudget(crawl, "/b", 700, 1000), robots.Reservation{Left: 600})
		c.wantReservation("the URL settled", c.reserveBudget(crawl, "/z", 100, 1000), robots.Reservation{Paid: true, Left: 600})
	}},
	{"releasing a URL not being paid gives nothing back", func(c *fleetCase) {
		c.reserveBudget(crawl, "/a", 600, 1000)
		c.release("/never", 600)
		c.wantReservation("with /a's 600 still reserved", c.reserveBudget(crawl, "/b", 600, 1000), robots.Reservation{Left: 400})
	}},
	{"what is left is never below 0", func(c *fleetCase) {
		// A site may charge more than it asked up front.
		c.settle("/a", 0, 1500)
		c.wantReservation("after a charge past the limit", c.reserveBudget(crawl, "/b", 1, 1000), robots.Reservation{Left: 0})
	}},
	{"concurrent reservations never pass the limit", func(c *fleetCase) {
		const workers, price, limit = 20, 3, 30
		var mu sync.Mutex
		var reserved, paid int
		var wg sync.WaitGroup
		for i := range workers {
			wg.Go(func() {
				// Two workers ask for each URL: one of them at most pays.
				r, err := c.f.Reserve(c.ctx(), crawl, fmt.Sprintf("/p%d", i/2), price, limit)
				if err != nil {
					c.Errorf("Reserve: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if r.Reserved {
					reserved++
				}
				if r.Paid {
					paid++
				}
			})
		}
		wg.Wait()
		if reserved != workers/2 || paid != workers/2 {
			c.Errorf("%d workers asking %d each of a limit of %d for %d URLs: %d reserved, %d told the URL is being paid; want %d and %d",
				workers, price, limit, workers/2, reserved, paid, workers/2, workers/2)
		}
		c.wantReservation("the budget spent", c.reserveBudget(crawl, "/last", 1, limit), robots.Reservation{Left: 0})
	}},
	{"concurrent reservations of more than the budget holds stop at the limit", func(c *fleetCase) {
		// Every URL its own, twice what the limit allows: a store that
		// reads what is left and then reserves lets more through.
		const workers, price, limit = 20, 3, 30
		if n := c.race(workers, func(i int) (bool, error) {
			r, err := c.f.Reserve(c.ctx(), crawl, fmt.Sprintf("/u%d", i), price, limit)
			return r.Reserved, err
		}); n != limit/price {
			c.Errorf("%d reservations of %d at once against a limit of %d: %d reserved, want %d", workers, price, limit, n, limit/price)
		}
		c.wantReservation("the budget spent", c.reserveBudget(crawl, "/last", 1, limit), robots.Reservation{Left: 0})
	}},
	{"settles and releases made at once are each counted", func(c *fleetCase) {
		// A store that reads the book and then writes it loses some.
		const urls, price = 8, 100
		const limit = 4 * urls * price
		for i := range urls {
			c.reserveBudget(crawl, fmt.Sprintf("/s%d", i), price, limit)
			c.reserveBudget(crawl, fmt.Sprintf("/r%d", i), price, limit)
		}
		c.race(3*urls, func(i int) (bool, error) {
			switch u := i % urls; i / urls {
			case 0: // each charged what it reserved
				return true, c.f.Settle(c.ctx(), crawl, fmt.Sprintf("/s%d", u), price, price)
			case 1: // each given back
				return true, c.f.Release(c.ctx(), crawl, fmt.Sprintf("/r%d", u), price)
			default: // each charged without a reservation
				return true, c.f.Settle(c.ctx(), crawl, fmt.Sprintf("/c%d", u), 0, price)
			}
		})
		// Spent: 2 x urls x price; reserved: none.
		want := int64(limit - 2*urls*price)
		c.wantReservation("after every settle and release", c.reserveBudget(crawl, "/last", want+1, limit), robots.Reservation{Left: want})
		c.wantReservation("the rest", c.reserveBudget(crawl, "/last", want, limit), robots.Reservation{Reserved: true, Left: 0})
	}},
	{"each Reserve is held to the limit it names", func(c *fleetCase) {
		// A crawl's budget may be raised (or lowered) between requests:
		// the book keeps what was spent and reserved, not a limit.
		c.wantReservation("first", c.reserveBudget(crawl, "/a", 600, 1000), robots.Reservation{Reserved: true, Left: 400})
		c.wantReservation("past the limit", c.reserveBudget(crawl, "/b", 600, 1000), robots.Reservation{Left: 400})
		c.wantReservation("the limit raised", c.reserveBudget(crawl, "/b", 600, 2000), robots.Reservation{Reserved: true, Left: 800})
		c.wantReservation("the limit lowered", c.reserveBudget(crawl, "/c", 1, 1000), robots.Reservation{Left: 0})
	}},
}
