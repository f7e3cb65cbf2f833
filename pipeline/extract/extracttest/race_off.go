//go:build !race

package extracttest

// RaceEnabled reports whether the test binary was built with -race (see
// race_on.go).
const RaceEnabled = false
