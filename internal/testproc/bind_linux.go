//go:build linux

package testproc

import (
	"os/exec"
	"syscall"
)

// bind has the kernel kill cmd when the thread that started it ends,
// which it does when the test process does.
func bind(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
