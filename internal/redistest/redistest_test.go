package redistest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEnv marks the test binary run by TestServerDiesWithTestProcess as
// the test process to be killed.
const childEnv = "REDISTEST_CHILD"

// TestServerDiesWithTestProcess runs this test binary again as a child
// that starts a server and waits; killing the child with SIGKILL, as go
// test's timeout or an impatient user would, runs none of its cleanup,
// and the server must still be gone within a few seconds.
func TestServerDiesWithTestProcess(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		s, err := Launch()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", s.PID())
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if err := Installed(); err != nil {
		t.Skip(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTestProcess$")
	child.Env = append(os.Environ(), childEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's server pid: %v (%q)", err, line)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
	if err != nil {
		t.Fatalf("child said %q, want its server's pid", line)
	}
	if !alive(pid) {
		t.Fatalf("server %d not running before the child was killed", pid)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = (&os.Process{Pid: pid}).Kill()
			t.Fatalf("redis-server %d still running 5s after its test process was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether process pid runs: a zombie, which an init that
// does not reap may leave, counts as dead.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
