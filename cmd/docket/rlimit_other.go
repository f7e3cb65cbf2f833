//go:build !unix

package main

// openFileLimit is the process's soft limit of open files (0: unknown).
func openFileLimit() int { return 0 }
