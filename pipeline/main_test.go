package pipeline_test

import (
	"os"
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/postgres/pgstore"
)

// TestMain starts one throwaway PostgreSQL cluster for the package; every
// PostgreSQL test gets its own database, copied from a migrated template. A
// child process measuring one bomb (TestProcessor_BombRSS) runs on SQLite
// alone.
func TestMain(m *testing.M) {
	if os.Getenv(extracttest.ChildEnv) != "" {
		os.Exit(m.Run())
	}
	testpg.Main(m, testpg.Options{Template: pgstore.MigrateURL})
}
