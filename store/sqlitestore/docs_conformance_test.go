package sqlitestore_test

import (
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/storetest"
)

func TestDocsConformance(t *testing.T) {
	storetest.RunDocs(t, storetest.DocsConfig{
		NewStore: func(t *testing.T) (docket.Store, driver.Driver) {
			d := setup(t)
			return d.Store, d.Driver
		},
	})
}
