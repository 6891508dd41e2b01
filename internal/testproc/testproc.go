// Package testproc starts the servers tests run against (redis-server,
// valkey-server, PostgreSQL) so that they die with the test process,
// even one killed by its timeout, which runs no cleanup: the kernel
// kills a server when the process that started it ends (Linux), and a
// watchdog shell kills it within a second of that otherwise.
package testproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Process is a server Start started, running until Stop.
type Process struct {
	pid    int
	kill   func() error
	exited <-chan error
}

// Start starts cmd bound to the test process, keeping any credential its
// SysProcAttr holds, and polls ready every poll until it answers nil.
// It fails, with the server's output, when the server exits first or
// ready has not answered within ceiling (the server then killed).
func Start(cmd *exec.Cmd, ready func() error, poll, ceiling time.Duration) (*Process, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	bind(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	watchdog := exec.Command("sh", "-c", "while kill -0 $0 2>/dev/null; do sleep 1; done; kill -9 $1 2>/dev/null",
		strconv.Itoa(os.Getpid()), strconv.Itoa(cmd.Process.Pid))
	if err := watchdog.Start(); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		_ = watchdog.Process.Kill()
		_ = watchdog.Wait()
		done <- err
	}()
	p := &Process{pid: cmd.Process.Pid, kill: cmd.Process.Kill, exited: done}
	name := filepath.Base(cmd.Path)
	for deadline := time.Now().Add(ceiling); time.Now().Before(deadline); time.Sleep(poll) {
		select {
		case err := <-done:
			// Wait has returned: the output is complete, and read once.
			return nil, fmt.Errorf("%s exited: %v: %s", name, err, out.String())
		default:
		}
		if ready() == nil {
			return p, nil
		}
	}
	p.Stop()
	return nil, fmt.Errorf("%s did not answer within %v: %s", name, ceiling, out.String())
}

// Stop kills the server at once, as a crash would, and waits until it
// is gone.
func (p *Process) Stop() {
	_ = p.kill()
	<-p.exited
}

// PID returns the server's process id.
func (p *Process) PID() int { return p.pid }
