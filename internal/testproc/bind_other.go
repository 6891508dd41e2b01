//go:build !linux

package testproc

import "os/exec"

// bind does nothing where there is no parent-death signal: the watchdog
// alone kills a server whose test process died.
func bind(*exec.Cmd) {}
