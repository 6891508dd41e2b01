//go:build linux

package redistest

import "syscall"

// serverAttr has the kernel kill the server when the thread that started
// it ends, which it does when the test process does.
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
