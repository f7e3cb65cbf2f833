package blobtest

import "syscall"

// sysProcAttr makes the kernel kill the server if the test process dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
