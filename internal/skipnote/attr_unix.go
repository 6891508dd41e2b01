//go:build unix

package skipnote

import "syscall"

// detached puts the waiting shell in a session of its own, so that
// neither a signal to the test's process group nor its end reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
