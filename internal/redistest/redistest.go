// Package redistest starts a throwaway redis-server for one test: on a free
// loopback port, with persistence off, stopped when the test ends, and
// killed with the test process if that dies first. For a failover it
// also starts a replica of one (StartReplica), freezes and promotes it,
// and forwards clients through a Proxy whose target can be switched; or
// a Redis Cluster of masters and replicas (StartCluster).
//
// Tests that need it skip with a message when redis-server is not
// installed, except under CI=true, where a missing server is a failure:
// .ci/run installs Debian's redis-server, so a skip there would hide a
// broken install step.
//
// The server is redis-server, or the one REDISTEST_SERVER names:
// REDISTEST_SERVER=valkey-server runs the same tests on Valkey, which
// .ci/run does for every module that starts one.
package redistest

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/skipnote"
	"github.com/crawlkit/robots/internal/testproc"
)

// startCeiling is a generous bound on how long redis-server may take to
// answer PING after it is started; it only matters when something is wrong.
const startCeiling = 10 * time.Second

// Server is one redis-server process. It is safe for concurrent use.
type Server struct {
	// Addr is the server's "127.0.0.1:port"; it stays the same across
	// Restart so that clients reconnect to it.
	Addr string

	path string
	port int
	// args are the flags a replica is started with besides the usual
	// ones.
	args []string

	// mu protects proc, replaced by Restart.
	mu   sync.Mutex
	proc *testproc.Process // nil while stopped
}

// Start starts redis-server for t and stops it when t ends. It skips t when
// redis-server is missing, unless the environment has CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	if Installed() != nil {
		skipnote.Require(t, server, installHint)
	}
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// server is the server binary the tests start: REDISTEST_SERVER, or
// redis-server.
var server = cmp.Or(os.Getenv("REDISTEST_SERVER"), "redis-server")

// installHint says how to install the server.
var installHint = map[bool]string{
	true:  "apt-get install redis-server",
	false: "apt-get install " + server + " (Valkey: from bookworm-backports, apt-get install -t bookworm-backports valkey-server)",
}[server == "redis-server"]

// Installed reports, through its error, whether the server can be run.
func Installed() error {
	if _, err := exec.LookPath(server); err != nil {
		return fmt.Errorf("redistest: %s not installed (%s): %w", server, installHint, err)
	}
	return nil
}

// Engine returns the server binary the tests start ("redis-server",
// "valkey-server").
func Engine() string { return server }

// Main runs the tests of a package whose every test and example needs
// redis-server: without it, it prints why and skips them all, except under
// CI=true, where that fails. Call it from TestMain.
func Main(m *testing.M) {
	if err := Installed(); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "%v: the package's tests must run in CI\n", err)
			os.Exit(1)
		}
		skipnote.Missing(server, installHint)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Launch starts redis-server and waits until it answers. The caller stops
// it.
func Launch() (*Server, error) { return launch(server) }

// LaunchEngine is Launch for the server binary engine ("valkey-server"),
// whatever REDISTEST_SERVER says: for a benchmark of both in one run.
func LaunchEngine(engine string) (*Server, error) { return launch(engine) }

// PID returns the server's process id, 0 when it is stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

func launch(engine string, args ...string) (*Server, error) {
	path, err := exec.LookPath(engine)
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s := &Server{path: path, args: args}
	// Another process may take the free port between our probe and the
	// server's bind, so a failed start tries a new port a few times.
	for range 3 {
		if s.port, err = freePort(); err != nil {
			break
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redistest: %w", err)
}

// Stop kills the server at once, as a crash would; with persistence off,
// everything it held is lost. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.Stop()
		s.proc = nil
	}
}

// Restart starts a stopped server again on the same address, empty, and
// waits until it answers.
func (s *Server) Restart() error {
	s.Stop()
	var err error
	// The port was just released; if the kernel has not let go of it
	// yet, a later try succeeds.
	for range 20 {
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redistest: restart: %w", err)
}

// StartReplica starts a redis-server for t that replicates the server at
// primary ("127.0.0.1:port": a Server's Addr, or a Proxy's to it, whose
// Switch to "" then leaves the replica behind), waits until its link is
// up, and stops it when t ends. It skips t as Start does.
func StartReplica(t testing.TB, primary string) *Server {
	t.Helper()
	if Installed() != nil {
		skipnote.Require(t, server, installHint)
	}
	host, port, err := net.SplitHostPort(primary)
	if err != nil {
		t.Fatalf("redistest: primary %q: %v", primary, err)
	}
	// A replica stores the copy its primary sends in an RDB file before
	// loading it, "--save" notwithstanding: in a directory of t's, not
	// the package's.
	s, err := launch(server, "--replicaof", host, port, "--dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(startCeiling)
	for {
		info, err := s.Do("INFO", "replication")
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: replica %s not linked to %s within %v: %v %q", s.Addr, primary, startCeiling, err, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Promote makes a replica a primary (REPLICAOF NO ONE), keeping what it
// holds, however far behind its old primary that is.
func (s *Server) Promote() error {
	_, err := s.Do("REPLICAOF", "NO", "ONE")
	return err
}

// Do sends one command to the server on a connection of its own and
// returns the reply: a status, an integer in decimal, or a bulk string
// (empty for a nil one). An error reply is an error; an array reply is
// not supported.
func (s *Server) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&cmd, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, cmd.String()); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("redistest: empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("redistest: %s: %s", args[0], line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("redistest: %s: unsupported reply %q", args[0], line)
}

// Proxy forwards TCP connections from a loopback port of its own to a
// target address that can be switched, as a failover moves a service
// address from a primary to its replica: clients given Proxy.Addr reach
// whichever server it points at. It is safe for concurrent use.
type Proxy struct {
	// Addr is the proxy's "127.0.0.1:port".
	Addr string

	ln net.Listener
	wg sync.WaitGroup

	// mu protects target, conns and closed.
	mu     sync.Mutex
	target string
	conns  map[net.Conn]struct{}
	closed bool
}

// StartProxy starts a Proxy to target for t and closes it when t ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// Switch points p at target and closes every connection it forwards, as
// the old server's going away would: clients dial again and reach target.
// An empty target cuts p off: every connection is closed at once, as a
// partition would (a replica linked through p falls behind its primary).
func (p *Proxy) Switch(target string) {
	p.mu.Lock()
	p.target = target
	p.closeConns()
	p.mu.Unlock()
}

// Close stops p and closes every connection it forwards.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.closeConns()
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// closeConns closes every connection of p. p.mu is held.
func (p *Proxy) closeConns() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *Proxy) accept() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		p.wg.Go(func() { p.forward(down, target) })
	}
}

// forward joins down to a new connection to target until either ends.
// One that target refuses is closed at once, as a dead server's would be.
func (p *Proxy) forward(down net.Conn, target string) {
	if target == "" {
		down.Close()
		return
	}
	up, err := net.DialTimeout("tcp", target, time.Second)
	if err != nil {
		down.Close()
		return
	}
	p.mu.Lock()
	if p.closed || p.target != target {
		// Switched or closed while dialing.
		p.mu.Unlock()
		down.Close()
		up.Close()
		return
	}
	p.conns[down], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, down)
	go pipe(down, up)
	<-done
	down.Close()
	up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, down)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (s *Server) start() error {
	cmd := exec.Command(s.path, append([]string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		// A primary sends its replicas their copy over the socket, never
		// through an RDB file in the working directory (the default from
		// Redis 7 on, not before).
		"--repl-diskless-sync", "yes",
		"--loglevel", "warning",
	}, s.args...)...)
	// The server dies with the test process, even one killed by its
	// timeout (package testproc).
	proc, err := testproc.Start(cmd, func() error { return ping(s.Addr) }, 10*time.Millisecond, startCeiling)
	if err != nil {
		return fmt.Errorf("port %d: %w", s.port, err)
	}
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
		return errors.New("unexpected reply " + strconv.Quote(line))
	}
	return nil
}
