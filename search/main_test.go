package search_test

import (
	"context"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/pgstore"
)

// TestMain starts one throwaway PostgreSQL cluster for the package; every
// PostgreSQL store gets its own database, copied from a migrated template.
func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{Template: pgstore.MigrateURL})
}

// stores are the drivers a search is measured on, each opening a fresh,
// migrated store.
var stores = []struct {
	name string
	open func(tb testing.TB) docket.Store
}{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

func openSQLite(tb testing.TB) docket.Store {
	tb.Helper()
	ctx := context.Background()
	dRaw, err := sqlite.Open(ctx, storepair.SQLitePath(tb))
	if err != nil {
		tb.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	tb.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return d
}

func openPostgres(tb testing.TB) docket.Store {
	tb.Helper()
	dRaw, err := postgres.Open(context.Background(), pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	d := storepair.NewPostgres(dRaw)
	tb.Cleanup(func() { _ = d.Close() })
	return d
}
