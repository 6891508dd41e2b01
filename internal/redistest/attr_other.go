//go:build !linux

package redistest

import "syscall"

// serverAttr is nil where there is no parent-death signal: the watchdog
// alone kills a server whose test process died.
func serverAttr() *syscall.SysProcAttr { return nil }
