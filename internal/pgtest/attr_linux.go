//go:build linux

package pgtest

import "syscall"

// serverAttr runs the server as cred (nil: as the test process) and has
// the kernel kill it when the thread that started it ends, which it does
// when the test process does.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
