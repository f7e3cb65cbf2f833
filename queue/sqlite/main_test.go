package sqlite_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: Close
// must release every connection the driver opened.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
