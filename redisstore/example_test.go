package redisstore_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// Two crawler processes share one Redis: the second uses the robots.txt
// the first fetched.
func Example() {
	// A throwaway redis-server stands in for the fleet's Redis.
	srv, err := redistest.Launch()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	var fetches atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fetches.Add(1)
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		io.WriteString(w, "page")
	}))
	defer site.Close()

	for process := 1; process <= 2; process++ {
		// These three lines switch a crawler to the fleet's Redis.
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		store := redisstore.New(rdb, redisstore.Options{Prefix: "crawler:"})
		opts := robots.Options{UserAgent: "ExampleBot/1.0", Fleet: store}

		client := &http.Client{Transport: robots.NewTransport(http.DefaultTransport, opts)}
		for _, path := range []string{"/public", "/private"} {
			resp, err := client.Get(site.URL + path)
			switch {
			case errors.Is(err, robots.ErrDisallowed):
				fmt.Printf("process %d: %s refused\n", process, path)
			case err != nil:
				fmt.Printf("process %d: %s: %v\n", process, path, err)
			default:
				resp.Body.Close()
				fmt.Printf("process %d: %s %s\n", process, path, resp.Status)
			}
		}
		rdb.Close()
	}
	fmt.Println("robots.txt fetches:", fetches.Load())
	// Output:
	// process 1: /public 200 OK
	// process 1: /private refused
	// process 2: /public 200 OK
	// process 2: /private refused
	// robots.txt fetches: 1
}
