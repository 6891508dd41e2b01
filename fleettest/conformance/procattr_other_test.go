//go:build !linux

package conformance_test

import "syscall"

// dieWithTest has nothing to ask of a system without Pdeathsig: the
// server is killed when the test ends.
func dieWithTest() *syscall.SysProcAttr { return nil }
