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
	"strconv"
)

// Start starts cmd bound to the test process, keeping any credential its
// SysProcAttr holds, and returns the channel its exit is sent on.
func Start(cmd *exec.Cmd) (exited <-chan error, err error) {
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
	return done, nil
}
