package pipeline_test

import (
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

// TestMain starts one throwaway PostgreSQL cluster for the package; every
// PostgreSQL test gets its own database, copied from a migrated template.
func TestMain(m *testing.M) {
	testpg.Main(m, testpg.Options{Template: postgres.MigrateURL})
}
