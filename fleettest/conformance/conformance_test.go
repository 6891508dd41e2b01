package conformance_test

import (
	"bufio"
	"cmp"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/fleettest"
	"github.com/crawlkit/robots/redisstore"
)

// TestRedisStore runs the Fleet contract's suite against redisstore, a
// fresh Prefix per store, on one redis-server.
func TestRedisStore(t *testing.T) {
	addr := startRedis(t)
	n := 0
	fleettest.Run(t, func(t *testing.T) robots.Fleet {
		n++
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { rdb.Close() })
		return redisstore.New(rdb, redisstore.Options{Prefix: fmt.Sprintf("conformance%d:", n)})
	})
}

// startRedis starts redis-server (or the server REDISTEST_SERVER names,
// valkey-server) on a free loopback port, with persistence off, killed
// when t ends, and returns its address. It skips t when the server is not
// installed, unless CI=true, where that fails.
func startRedis(t *testing.T) string {
	t.Helper()
	server := cmp.Or(os.Getenv("REDISTEST_SERVER"), "redis-server")
	path, err := exec.LookPath(server)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (apt-get install %s): %v; the conformance tests must run in CI", server, server, err)
		}
		t.Skipf("%s not installed (apt-get install %s): %v", server, server, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var out strings.Builder
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = dieWithTest()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("redis-server on %s exited: %v: %s", addr, err, out.String())
		default:
		}
		if ping(addr) == nil {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING within 10s: %s", addr, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping reports, through its error, whether a server answers PING on addr.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}
