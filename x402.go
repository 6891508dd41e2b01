package robots

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
)

// X402 is the x402 form of Cloudflare's pay per crawl (x402 protocol
// version 2): a 402 whose PAYMENT-REQUIRED header holds, in base64 JSON,
// the payment requirements it accepts; the transport takes the one of
// scheme "batch-settlement" on network "cloudflare:402", whose asset is
// an ISO 4217 currency, and answers with PAYMENT-SIGNATURE, the payment
// payload that accepts it, which the request's Web Bot Auth signature
// covers (the crawler's identity is the payment's authorisation, and
// the batch is settled with its account). PAYMENT-RESPONSE says what was
// settled. An amount is read in the asset's atomic units: the
// requirement's extra.decimals when it gives them, else the currency's
// ISO 4217 minor unit (2 for USD and EUR, 0 for JPY).
var X402 PaymentScheme = x402{}

// The x402 header fields and the scheme and network taken.
const (
	headerPaymentRequired  = "Payment-Required"
	headerPaymentSignature = "Payment-Signature"
	headerPaymentResponse  = "Payment-Response"
	x402Scheme             = "batch-settlement"
	x402Network            = "cloudflare:402"
	maxX402Header          = 16 << 10
)

type x402 struct{}

// x402Requirement is what the transport reads of one
// PaymentRequirements; the payload accepts the requirement as sent, byte
// for byte.
type x402Requirement struct {
	Scheme  string          `json:"scheme"`
	Network string          `json:"network"`
	Amount  string          `json:"amount"`
	Asset   string          `json:"asset"`
	Extra   json.RawMessage `json:"extra,omitempty"`
}

func (x402) Quote(resp *http.Response) (Quote, bool, error) {
	field := resp.Header.Get(headerPaymentRequired)
	if field == "" {
		return Quote{}, false, nil
	}
	var req struct {
		Version  int               `json:"x402Version"`
		Resource json.RawMessage   `json:"resource,omitempty"`
		Accepts  []json.RawMessage `json:"accepts"`
	}
	if err := decodeX402(field, &req); err != nil {
		return Quote{}, true, fmt.Errorf("PAYMENT-REQUIRED: %w", err)
	}
	if req.Version != 2 {
		return Quote{}, true, fmt.Errorf("PAYMENT-REQUIRED is x402 version %d; version 2 is spoken", req.Version)
	}
	var offered []string
	for _, raw := range req.Accepts {
		var r x402Requirement
		if json.Unmarshal(raw, &r) != nil {
			continue
		}
		offered = append(offered, r.Scheme+" on "+r.Network)
		if r.Scheme != x402Scheme || r.Network != x402Network {
			continue
		}
		price, err := r.price()
		if err != nil {
			return Quote{}, true, err
		}
		payload, err := json.Marshal(struct {
			Version  int             `json:"x402Version"`
			Resource json.RawMessage `json:"resource,omitempty"`
			Accepted json.RawMessage `json:"accepted"`
			Payload  struct{}        `json:"payload"`
		}{Version: 2, Resource: req.Resource, Accepted: raw})
		if err != nil {
			return Quote{}, true, err
		}
		return Quote{Price: price, Header: headerPaymentSignature, Value: base64.StdEncoding.EncodeToString(payload)}, true, nil
	}
	return Quote{}, true, fmt.Errorf("PAYMENT-REQUIRED accepts %s; the transport pays %s on %s", strings.Join(offered, ", "), x402Scheme, x402Network)
}

func (x402) Receipt(resp *http.Response, q Quote) (Price, bool, error) {
	field := resp.Header.Get(headerPaymentResponse)
	if field == "" {
		return Price{}, false, nil
	}
	var settled struct {
		Success bool   `json:"success"`
		Reason  string `json:"errorReason"`
		Amount  string `json:"amount"`
	}
	if err := decodeX402(field, &settled); err != nil {
		// A settlement the site made but wrote badly counts at the price
		// offered.
		return q.Price, resp.StatusCode < 400, nil
	}
	if !settled.Success {
		return Price{}, false, fmt.Errorf("%w: %s", errSettlement, settled.Reason)
	}
	if resp.StatusCode >= 400 {
		// An error response is never counted as spent, whatever it says
		// was settled, as in pay per crawl.
		return Price{}, false, nil
	}
	if settled.Amount == "" {
		return q.Price, true, nil
	}
	var accepted struct {
		Accepted x402Requirement `json:"accepted"`
	}
	payload, err := base64.StdEncoding.DecodeString(q.Value)
	if err == nil {
		err = json.Unmarshal(payload, &accepted)
	}
	r := accepted.Accepted
	r.Amount = settled.Amount
	price, err2 := r.price()
	if err != nil || err2 != nil {
		return q.Price, true, nil
	}
	return price, true, nil
}

// decodeX402 reads an x402 header field: base64 of a JSON message.
func decodeX402(field string, v any) error {
	if len(field) > maxX402Header {
		return fmt.Errorf("over %d bytes", maxX402Header)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(field))
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("not the JSON message: %w", err)
	}
	return nil
}

// price reads r's amount and asset as a Price.
func (r x402Requirement) price() (Price, error) {
	if !validCurrency(r.Asset) {
		return Price{}, fmt.Errorf("x402 asset %q is not an ISO 4217 currency", r.Asset)
	}
	var extra struct {
		Decimals *int `json:"decimals"`
	}
	if len(r.Extra) > 0 {
		json.Unmarshal(r.Extra, &extra)
	}
	decimals := minorUnit(r.Asset)
	if extra.Decimals != nil {
		decimals = *extra.Decimals
	}
	n, ok := new(big.Int).SetString(r.Amount, 10)
	if !ok || n.Sign() < 0 || decimals < 0 || decimals > 18 {
		return Price{}, fmt.Errorf("x402 amount %q (%d decimals) is not a non-negative count of atomic units", r.Amount, decimals)
	}
	// To millionths: scale by 10^(6-decimals), rounding a finer amount up
	// so that the budget never counts less than is paid.
	micros := new(big.Int).Set(n)
	if decimals <= 6 {
		micros.Mul(micros, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(6-decimals)), nil))
	} else {
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals-6)), nil)
		q, m := new(big.Int).QuoRem(micros, d, new(big.Int))
		if m.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		micros = q
	}
	if !micros.IsInt64() || micros.Int64() > maxPriceMicros {
		return Price{}, fmt.Errorf("x402 amount %q is too large", r.Amount)
	}
	return Price{Currency: r.Asset, Micros: micros.Int64()}, nil
}

// minorUnit is a currency's ISO 4217 minor unit: the decimals of its
// smallest amount.
func minorUnit(currency string) int {
	switch currency {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	case "CLF", "UYW":
		return 4
	}
	return 2
}
