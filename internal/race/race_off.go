//go:build !race

// Package race reports whether the race detector is on. Tests that measure
// a process's memory, or that build fixtures too large for the detector's
// slowdown (30 times and more for SQLite compiled to Go), skip themselves
// under -race; scripts/test.sh runs them in a pass without it.
package race

// Enabled reports whether the binary was built with -race.
const Enabled = false
