// Package pgtest starts a throwaway PostgreSQL server for one test:
// Debian's postgresql, a cluster made by initdb in a temporary directory,
// listening on a free loopback port with durability off, removed when the
// test ends, and killed with the test process if that dies first.
//
// Tests that need it skip with a message when PostgreSQL is not
// installed, except under CI=true, where a missing server is a failure:
// .ci/run installs Debian's postgresql, so a skip there would hide a
// broken install step. PostgreSQL refuses to run as root: as root, the
// cluster is made and run as the postgres user the package creates.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/skipnote"
	"github.com/crawlkit/robots/internal/testproc"
)

// startCeiling is a generous bound on how long initdb and the server may
// take to start: only a broken install reaches it.
const startCeiling = 2 * time.Minute

// installHint says how to install PostgreSQL.
const installHint = "apt-get install postgresql"

// Server is one PostgreSQL server. It is safe for concurrent use.
type Server struct {
	// URL is the connection string of its database, user and address:
	// "postgres://robots@127.0.0.1:PORT/robots?sslmode=disable".
	URL string

	bin, dir string
	cred     *syscall.Credential
	port     int

	mu   sync.Mutex
	proc *testproc.Process // nil while stopped
}

// binDir returns the directory of Debian's newest PostgreSQL binaries,
// or the one initdb is found in on the PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("pgtest: PostgreSQL not installed (%s)", installHint)
}

// Installed reports, through its error, whether PostgreSQL can be run.
func Installed() error {
	_, err := binDir()
	return err
}

// Start starts a server for t and removes it when t ends. It skips t when
// PostgreSQL is missing, unless the environment has CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	if Installed() != nil {
		skipnote.Require(t, "PostgreSQL", installHint)
	}
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	return s
}

// Launch makes a cluster and starts its server. The caller removes it.
func Launch() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		if s.cred, err = postgresUser(dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "robots",
		"--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	for range 3 {
		if s.port, err = freePort(); err != nil {
			break
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s.URL = fmt.Sprintf("postgres://robots@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	return s, nil
}

// postgresUser gives dir to the postgres user and returns its
// credential, for a test process running as root.
func postgresUser(dir string) (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Stop kills the server at once, as a crash would. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.Stop()
		s.proc = nil
	}
}

// Restart starts a stopped server again on the same address and data,
// as after a crash, and waits until it answers.
func (s *Server) Restart() error {
	s.Stop()
	var err error
	for range 20 {
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pgtest: restart: %w", err)
}

// PID returns the server's (the postmaster's) process id, 0 when it is
// stopped; each connection is served by a child of it.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Remove stops the server and removes its cluster.
func (s *Server) Remove() {
	s.Stop()
	os.RemoveAll(s.dir)
}

func (s *Server) start() error {
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-p", strconv.Itoa(s.port), "-k", s.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "log_min_messages=warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	ready := func() error {
		return exec.Command(filepath.Join(s.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port)).Run()
	}
	// The server dies with the test process, even one killed by its
	// timeout (package testproc).
	proc, err := testproc.Start(cmd, ready, 20*time.Millisecond, startCeiling)
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
