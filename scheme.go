package robots

import (
	"errors"
	"net/http"
)

// PaymentScheme is one wire form of paying for a page: how a 402 names
// its price, what the paid request carries, and how the answer says what
// was charged. Payment.Schemes lists those a transport speaks; the price
// limit, the budget, the one retry, the pacing and *PaymentError are the
// transport's, whatever the form. A scheme is stateless and safe for
// concurrent use.
type PaymentScheme interface {
	// Quote reads resp, a 402, for the price it asks in this form and
	// the header field that pays it; ok is false for a 402 in another
	// form, err a 402 in this form that cannot be read (the request then
	// fails with a *PaymentError saying why).
	Quote(resp *http.Response) (q Quote, ok bool, err error)
	// Receipt reads resp, the answer to a request paid as q says, for
	// what was charged: ok is false when it says nothing of a charge, err
	// a settlement the site says failed.
	Receipt(resp *http.Response, q Quote) (charged Price, ok bool, err error)
}

// Quote is a price a site asked in some scheme's wire form, and the
// header field that pays it on the request sent once more.
type Quote struct {
	// Price is what the site asks, in the scheme's reading.
	Price Price
	// Header and Value are the field the paid request carries (a Web Bot
	// Auth signer under the transport covers the ones it knows:
	// crawler-exact-price, crawler-max-price, payment-signature).
	Header, Value string
}

// PayPerCrawl is Cloudflare's pay per crawl in its header form: a 402
// with crawler-price ("USD 0.01"), paid by crawler-exact-price with the
// same value, charged as crawler-charged says. The transport also offers
// crawler-max-price up front to an origin that asked a price this way.
var PayPerCrawl PaymentScheme = payPerCrawl{}

type payPerCrawl struct{}

func (payPerCrawl) Quote(resp *http.Response) (Quote, bool, error) {
	asked := resp.Header.Get(headerPrice)
	if asked == "" {
		return Quote{}, false, nil
	}
	price, err := ParsePrice(asked)
	if err != nil {
		return Quote{}, true, err
	}
	return Quote{Price: price, Header: headerExactPrice, Value: price.String()}, true, nil
}

func (payPerCrawl) Receipt(resp *http.Response, q Quote) (Price, bool, error) {
	if resp.StatusCode >= 400 {
		return Price{}, false, nil
	}
	charged, ok := resp.Header[headerCharged]
	if !ok {
		return Price{}, false, nil
	}
	price, err := ParsePrice(charged[0])
	if err != nil {
		// A charge the site did make but wrote badly counts at the price
		// offered: never less than the budget may have lost.
		return q.Price, true, nil
	}
	return price, true, nil
}

// errSettlement is the error of a Receipt whose site says the payment
// failed.
var errSettlement = errors.New("the site's settlement failed")
