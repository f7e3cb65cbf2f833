//go:build !linux

package blobtest

import "syscall"

// sysProcAttr: only Linux can tie the server's life to the test process's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
