package pgstore_test

import (
	"context"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/pgstore"
)

// Every crawler process of a fleet opens the same database and gives the
// Store as Options.Fleet: the fleet then fetches each robots.txt once,
// keeps one pace per origin and one budget per crawl.
func ExampleNew() {
	pool, err := pgxpool.New(context.Background(), "postgres://crawler@db.internal/crawl")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store := pgstore.New(pool, pgstore.Options{Schema: "robots"})
	client := &http.Client{Transport: robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", Fleet: store})}
	_ = client
}
