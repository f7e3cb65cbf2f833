//go:build race

package extracttest

// RaceEnabled reports whether the test binary was built with -race. Peak
// resident sets measured under the race detector measure the detector
// (its shadow memory, and parses several times slower), so the bomb RSS
// tests run without it: scripts/test.sh runs them in a pass of their own.
const RaceEnabled = true
