package fleettest_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
	"github.com/crawlkit/robots/redisstore"
)

// A store's test runs the suite in one line, opening a fresh, empty store
// for each case: here a redisstore.Store under a Prefix of its own on the
// test's Redis at addr. The function is a test of the store's package:
//
//	func TestFleet(t *testing.T) { testFleet(t, redisAddr) }
func ExampleRun() {
	testFleet := func(t *testing.T, addr string) {
		n := 0
		fleettest.Run(t, func(t *testing.T) robots.Fleet {
			n++
			rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
			t.Cleanup(func() { rdb.Close() })
			return redisstore.New(rdb, redisstore.Options{Prefix: fmt.Sprintf("%s:%d:", t.Name(), n)})
		})
	}
	_ = testFleet
}
