package pgstore_test

import (
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/storetest"
)

// TestDocsConformance runs the document-store conformance suite, each
// subtest on a fresh migrated database.
func TestDocsConformance(t *testing.T) {
	storetest.RunDocs(t, storetest.DocsConfig{
		NewStore: func(t *testing.T) (docket.Store, driver.Driver) {
			d := newStore(t) // main_test.go
			return d.Store, d.Driver
		},
	})
}
