//go:build !linux

package pgtest

import "syscall"

// serverAttr runs the server as cred; the watchdog alone kills it with
// the test process.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
