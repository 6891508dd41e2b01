package robots

import (
	"encoding/base64"
	"net/http"
	"testing"
)

// FuzzPaymentSchemes feeds both schemes the header values a hostile site
// could send on a 402 and on the answer to a paid request: they never
// panic, and a price they read is never negative.
func FuzzPaymentSchemes(f *testing.F) {
	f.Add("USD 0.01", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"batch-settlement","network":"cloudflare:402","amount":"1","asset":"USD","extra":{"decimals":2}}]}`)))
	f.Add("EUR 1e9", base64.StdEncoding.EncodeToString([]byte(`{"success":true,"amount":"99999999999999999999999"}`)))
	f.Add("", "not base64 !!")
	f.Add("USD -1", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"batch-settlement","network":"cloudflare:402","amount":"5","asset":"USD","extra":{"decimals":-3}}]}`)))
	f.Fuzz(func(t *testing.T, price, x402Field string) {
		resp := &http.Response{StatusCode: http.StatusPaymentRequired, Header: http.Header{}}
		resp.Header.Set(headerPrice, price)
		resp.Header.Set(headerCharged, price)
		resp.Header.Set(headerPaymentRequired, x402Field)
		resp.Header.Set(headerPaymentResponse, x402Field)
		for _, s := range []PaymentScheme{PayPerCrawl, X402} {
			q, ok, err := s.Quote(resp)
			if ok && err == nil && q.Price.Micros < 0 {
				t.Errorf("%T read a negative price %v", s, q.Price)
			}
			resp.StatusCode = http.StatusOK
			if c, ok, err := s.Receipt(resp, q); ok && err == nil && c.Micros < 0 {
				t.Errorf("%T read a negative charge %v", s, c)
			}
			resp.StatusCode = http.StatusPaymentRequired
		}
	})
}
