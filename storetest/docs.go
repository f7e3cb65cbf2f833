package storetest

import (
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// DocsConfig configures a run of the document-store suite.
type DocsConfig struct {
	// NewStore returns a fresh, migrated, empty store and the queue driver
	// on the same database (for our drivers, the same object twice). It
	// registers its own cleanup and fails t when it cannot.
	NewStore func(t *testing.T) (docket.Store, queue.Driver)
}

// RunDocs runs the document-store suite (docket.Store and docket.Tx)
// against the stores cfg.NewStore returns.
func RunDocs(t *testing.T, cfg DocsConfig) {
	t.Helper()
	if cfg.NewStore == nil {
		t.Fatal("storetest: DocsConfig.NewStore is nil")
	}
}
