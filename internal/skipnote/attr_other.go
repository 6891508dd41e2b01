//go:build !unix

package skipnote

import "syscall"

// detached is nil where there are no sessions; there is no /proc either,
// so the line never needs the waiting shell.
func detached() *syscall.SysProcAttr { return nil }
