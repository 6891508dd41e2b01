package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/crawlkit/robots"
)

// maxLedgerURL is the longest URL the ledger keeps as it is: a btree
// index row holds about 2.7 KB, and URLs as sent can be longer.
const maxLedgerURL = 1024

// ledgerURL is how url is named in the ledger: as it is, or, when longer
// than maxLedgerURL, by its SHA-256, which no URL spells.
func ledgerURL(url string) string {
	if len(url) <= maxLedgerURL {
		return url
	}
	sum := sha256.Sum256([]byte(url))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Reserve sets amount aside from crawl's budget of limit for url, unless
// url is paid or being paid in crawl or the budget would pass limit, in
// one statement (reserve_budget, which locks the crawl's row): every
// process on the same database spends from one budget.
func (s *Store) Reserve(ctx context.Context, crawl, url string, amount, limit int64) (robots.Reservation, error) {
	return call(ctx, s, "reserve", func(ctx context.Context) (robots.Reservation, error) {
		var answer int32
		var left int64
		err := s.pool.QueryRow(ctx, `SELECT o_answer, o_remaining FROM `+s.schema+`.reserve_budget($1, $2, $3, $4, $5)`,
			crawl, ledgerURL(url), amount, limit, s.ttl.Milliseconds()).Scan(&answer, &left)
		return robots.Reservation{Reserved: answer == 1, Paid: answer == 2, Left: left}, err
	})
}

// Settle ends url's reservation of reserved with charged spent, in one
// statement: url stays paid in crawl.
func (s *Store) Settle(ctx context.Context, crawl, url string, reserved, charged int64) error {
	_, err := call(ctx, s, "settle", func(ctx context.Context) (struct{}, error) {
		_, err := s.pool.Exec(ctx, `SELECT `+s.schema+`.settle_budget($1, $2, $3, $4, $5)`, crawl, ledgerURL(url), reserved, charged, s.ttl.Milliseconds())
		return struct{}{}, err
	})
	return err
}

// Release gives url's reservation of reserved back, unspent, in one
// statement.
func (s *Store) Release(ctx context.Context, crawl, url string, reserved int64) error {
	_, err := call(ctx, s, "release", func(ctx context.Context) (struct{}, error) {
		_, err := s.pool.Exec(ctx, `SELECT `+s.schema+`.release_budget($1, $2, $3)`, crawl, ledgerURL(url), reserved)
		return struct{}{}, err
	})
	return err
}
