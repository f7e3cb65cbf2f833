package pipeline_test

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/store/pgstore"
)

// TestMain starts one throwaway PostgreSQL cluster for the package; every
// PostgreSQL test gets its own database, copied from a migrated template. A
// child process measuring one bomb (TestProcessor_BombRSS) runs on SQLite
// alone.
//
// At most two tests run at once, whatever -parallel says: each test's
// processor has a PDF engine of its own, and with eight at once on two
// cores PDF jobs waited past their tests' one-minute bounds.
func TestMain(m *testing.M) {
	sandbox.Main() // the sandbox tests' children are this binary, run again
	flag.Parse()
	if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && n > 2 {
		_ = flag.Set("test.parallel", "2")
	}
	if os.Getenv(extracttest.ChildEnv) != "" {
		os.Exit(m.Run())
	}
	pgtest.Main(m, pgtest.Options{Template: pgstore.MigrateURL})
}
