package robots

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Price is an amount of money as pay-per-crawl headers write it: an ISO
// 4217 currency code and a decimal amount, "USD 0.01". The amount is kept
// in millionths of the currency's unit, so that sums are exact.
type Price struct {
	// Currency is the ISO 4217 code, three upper-case letters ("USD").
	Currency string
	// Micros is the amount in millionths of a unit: 10000 is 0.01.
	Micros int64
}

// maxPriceMicros bounds an amount: a trillion units, far past any
// price or budget, and far from overflowing a sum of them.
const maxPriceMicros = 1e18

// ParsePrice reads a price as pay-per-crawl headers write it: a currency
// code, a space and a decimal amount with at most six decimals ("USD
// 0.01", "EUR 2"). It rejects a negative or malformed amount.
func ParsePrice(s string) (Price, error) {
	cur, amount, ok := strings.Cut(strings.TrimSpace(s), " ")
	amount = strings.TrimSpace(amount)
	if !ok || len(cur) != 3 || strings.ToUpper(cur) != cur || strings.Trim(cur, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return Price{}, fmt.Errorf("robots: price %q is not a currency code and an amount (\"USD 0.01\")", s)
	}
	micros, err := parseMicros(amount)
	if err != nil {
		return Price{}, fmt.Errorf("robots: price %q: %w", s, err)
	}
	return Price{Currency: cur, Micros: micros}, nil
}

// MustParsePrice is ParsePrice for a price written in the program, as in
// Options: it panics on an error.
func MustParsePrice(s string) Price {
	p, err := ParsePrice(s)
	if err != nil {
		panic(err)
	}
	return p
}

// parseMicros reads a non-negative decimal amount into millionths.
func parseMicros(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, errors.New("the amount is not a decimal number with at most six decimals")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxPriceMicros/1e6 {
		return 0, errors.New("the amount is too large")
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return w*1e6 + f, nil
}

// String writes p as the headers do, with as few decimals as keep it
// exact and at least two: "USD 0.01", "USD 1.50", "EUR 0.000125".
func (p Price) String() string {
	return p.Currency + " " + formatMicros(p.Micros)
}

// formatMicros writes an amount of millionths as a decimal number.
func formatMicros(m int64) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := fmt.Sprintf("%06d", m%1e6)
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return sign + strconv.FormatInt(m/1e6, 10) + "." + frac
}

// IsZero reports whether p is the zero Price, no currency and no amount.
func (p Price) IsZero() bool { return p == Price{} }
