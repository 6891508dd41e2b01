// Command fleetcost counts what a paced request costs a fleet sharing its
// pace through redisstore, in instructions, on both sides of the wire,
// against the unit of a Redis round trip, a PING:
//
//   - client: the instructions of the crawler's process per request
//     through robots.Transport with a redisstore.Store as Options.Fleet,
//     MinDelay 1 s on a fake clock (so each request reserves a slot in
//     Redis and its wait is free), to one origin whose robots.txt it holds;
//     beside the instructions of one go-redis PING;
//   - server: the instructions of redis-server per such request, beside
//     those per PING;
//   - beside them, client only, the same paced request with no Fleet (the
//     process's own pace) and with robots.NewMemoryFleet: what the
//     transport's pacing costs before any store is asked.
//
// Usage (from the bench directory; needs valgrind and redis-server):
//
//	go run ./cmd/fleetcost [-small n] [-large n]
//
// Method: callgrind counts every instruction of one process. For the
// client, this program runs itself under valgrind --tool=callgrind for
// -small and for -large operations against a redis-server running
// natively, with GOMAXPROCS=1, the collector off and asynchronous
// preemption off, and reports the difference of the two totals over the
// difference of the counts, so that start-up and set-up cancel. For the
// server, redis-server (persistence off) runs under callgrind, a fresh
// one for each count, while this program sends the operations natively;
// the server's totals are differenced the same way, its start-up, the
// client's connection and the first call (which loads the script)
// cancelling. The counts repeat within about a percent whatever the
// machine's load.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/internal/fakeclock"
	"github.com/crawlkit/robots/redisstore"
)

func main() {
	work := flag.String("work", "", "run `workload` (ping, script, fleet, memfleet or local) against -addr and exit (used by the program itself)")
	addr := flag.String("addr", "", "redis-server address for -work")
	n := flag.Int("n", 0, "operations for -work")
	small := flag.Int("small", 2000, "operations of the smaller run")
	large := flag.Int("large", 22000, "operations of the larger run")
	flag.Parse()
	if *work != "" {
		if err := run(*work, *addr, *n); err != nil {
			fmt.Fprintln(os.Stderr, "fleetcost:", err)
			os.Exit(1)
		}
		return
	}
	if err := measure(*small, *large); err != nil {
		fmt.Fprintln(os.Stderr, "fleetcost:", err)
		os.Exit(1)
	}
}

// run performs the workload once to warm up (a fleet request fetches the
// robots.txt and loads the script), then n times.
func run(work, addr string, n int) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	var op func() error
	switch work {
	case "ping":
		op = func() error { return rdb.Ping(ctx).Err() }
	case "script":
		// The floor of a script call: slotScript's keys and arguments,
		// no command run.
		script := redis.NewScript("return 1")
		args := []any{make([]byte, 64), "member", "epoch", "0"}
		op = func() error {
			return script.Run(ctx, rdb, []string{"rs1:{https://www.example.com:443}:slot"}, args...).Err()
		}
	case "fleet", "memfleet", "local":
		clock := fakeclock.New()
		var fleet robots.Fleet = redisstore.New(rdb, redisstore.Options{})
		switch work {
		case "memfleet":
			fleet = robots.NewMemoryFleet()
		case "local":
			fleet = nil
		}
		tr := robots.NewTransport(stub{}, robots.Options{
			UserAgent: "BenchBot/1.0",
			MinDelay:  time.Second,
			Fleet:     fleet,
			Now:       clock.Now,
			Sleep:     clock.Sleep,
		})
		req, err := http.NewRequest(http.MethodGet, "https://www.example.com/catalog/page-17", nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "BenchBot/1.0")
		before := tr.Stats()
		op = func() error {
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		}
		defer func() {
			// Every request must have reserved its slot in Redis.
			if st := tr.Stats(); st.StoreErrors != before.StoreErrors || st.StoreFallbacks != before.StoreFallbacks {
				fmt.Fprintf(os.Stderr, "fleetcost: the store failed: %+v\n", st)
				os.Exit(1)
			}
		}()
	default:
		return fmt.Errorf("unknown workload %q", work)
	}
	for i := 0; i <= n; i++ {
		if err := op(); err != nil {
			return err
		}
	}
	return nil
}

// stub answers the robots.txt and every page without I/O.
type stub struct{}

func (stub) RoundTrip(req *http.Request) (*http.Response, error) {
	body := ""
	if req.URL.Path == "/robots.txt" {
		body = "User-agent: *\nDisallow: /private\n"
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func measure(small, large int) error {
	if large <= small {
		return errors.New("-large must exceed -small")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "fleetcost")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fleetcost: callgrind files in %s\n", dir)
	cost := map[string][2]float64{}
	for _, work := range []string{"ping", "script", "fleet", "memfleet", "local"} {
		client, err := perOp(small, large, func(n int) (float64, error) {
			srv, err := startServer(dir, false, work, n)
			if err != nil {
				return 0, err
			}
			defer srv.stop()
			file := filepath.Join(dir, fmt.Sprintf("client-%s-%d.callgrind", work, n))
			cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+file,
				self, "-work", work, "-addr", srv.addr, "-n", strconv.Itoa(n))
			cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				return 0, fmt.Errorf("client %s: %w\n%s", work, err, out)
			}
			return total(file)
		})
		if err != nil {
			return err
		}
		if work == "memfleet" || work == "local" {
			cost[work] = [2]float64{client, 0} // nothing reaches Redis
			continue
		}
		server, err := perOp(small, large, func(n int) (float64, error) {
			srv, err := startServer(dir, true, work, n)
			if err != nil {
				return 0, err
			}
			cmd := exec.Command(self, "-work", work, "-addr", srv.addr, "-n", strconv.Itoa(n))
			if out, err := cmd.CombinedOutput(); err != nil {
				srv.stop()
				return 0, fmt.Errorf("workload %s: %w\n%s", work, err, out)
			}
			if err := srv.stop(); err != nil {
				return 0, err
			}
			return total(srv.file)
		})
		if err != nil {
			return err
		}
		cost[work] = [2]float64{client, server}
	}
	ping, script, fleet := cost["ping"], cost["script"], cost["fleet"]
	fmt.Printf("| | instructions per operation, client | server |\n| --- | ---: | ---: |\n")
	fmt.Printf("| PING (go-redis) | %s | %s |\n", commas(ping[0]), commas(ping[1]))
	fmt.Printf("| a script that runs no command, with the slot's keys and arguments | %s | %s |\n", commas(script[0]), commas(script[1]))
	fmt.Printf("| paced fleet request (robots.Transport, redisstore) | %s | %s |\n", commas(fleet[0]), commas(fleet[1]))
	fmt.Printf("| request / PING | %.2f× | %.2f× |\n", fleet[0]/ping[0], fleet[1]/ping[1])
	fmt.Printf("| the same request with robots.NewMemoryFleet | %s | |\n", commas(cost["memfleet"][0]))
	fmt.Printf("| the same request without a Fleet | %s | |\n", commas(cost["local"][0]))
	return nil
}

// perOp returns (count(large) - count(small)) / (large - small).
func perOp(small, large int, count func(n int) (float64, error)) (float64, error) {
	a, err := count(small)
	if err != nil {
		return 0, err
	}
	b, err := count(large)
	if err != nil {
		return 0, err
	}
	return (b - a) / float64(large-small), nil
}

// server is a redis-server on a free loopback port, under callgrind when
// file is set.
type server struct {
	addr, file string
	cmd        *exec.Cmd
}

func startServer(dir string, counted bool, work string, n int) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	if counted {
		s.file = filepath.Join(dir, fmt.Sprintf("server-%s-%d.callgrind", work, n))
		s.cmd = exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=" + s.file, "redis-server"}, args...)...)
	} else {
		s.cmd = exec.Command("redis-server", args...)
	}
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, io.Discard
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			return nil, fmt.Errorf("redis-server on %s never listened: %w", s.addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts the server down, so that callgrind writes its file.
func (s *server) stop() error {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr})
	defer rdb.Close()
	rdb.Shutdown(context.Background()) // the connection closes; its error says nothing
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(2 * time.Minute):
		s.cmd.Process.Kill()
		<-done
		return fmt.Errorf("redis-server on %s did not stop", s.addr)
	}
}

// total returns the instruction total of a callgrind file.
func total(file string) (float64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "totals: "); ok {
			return strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "summary: "); ok {
			return strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
	}
	return 0, fmt.Errorf("%s: no totals line", file)
}

// commas formats v rounded, with thousands separated by commas.
func commas(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
