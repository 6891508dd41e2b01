package conformance_test

import "syscall"

// dieWithTest makes the server get SIGKILL when the test process dies,
// however it dies.
func dieWithTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
