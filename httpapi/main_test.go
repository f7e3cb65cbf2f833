package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/pgstore"
)

// TestMain starts one throwaway PostgreSQL cluster for the test binary (the
// httpapi and httpapi_test packages share it); every PostgreSQL test gets
// its own database, copied from a migrated template.
func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{Template: pgstore.MigrateURL})
}

// TestStore is the job engine's driver and the document store over one
// database, as one value (internal/storepair). Exported for the httpapi_test package.
type TestStore interface {
	docket.Store
	driver.Driver
	Close() error
}

// TestBackends names the stores the API tests run on.
var TestBackends = []string{"sqlite", "postgres"}

// OpenTestStore returns a fresh, migrated store of backend, closed when the
// test ends. Exported for the httpapi_test package.
func OpenTestStore(tb testing.TB, backend string) TestStore {
	tb.Helper()
	switch backend {
	case "sqlite":
		return openSQLite(tb, nil)
	case "postgres":
		// migrated by TestMain's template; the pool as cmd/docket opens it
		d, err := postgres.Open(context.Background(), pgtest.NewDatabase(tb))
		if err != nil {
			tb.Fatalf("open postgres: %v", err)
		}
		tb.Cleanup(func() { _ = d.Close() })
		return storepair.NewPostgres(d)
	}
	tb.Fatalf("unknown backend %q", backend)
	return nil
}

// openSQLite returns a fresh, migrated SQLite store whose clock is now
// (nil: time.Now), closed when the test ends.
func openSQLite(tb testing.TB, now func() time.Time) *storepair.SQLite {
	tb.Helper()
	ctx := context.Background()
	d, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: storepair.SQLitePath(tb), Now: now})
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	s := storepair.NewSQLite(d)
	if err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	return s
}

// forEachStore runs fn as a parallel subtest per store ("sqlite",
// "postgres"), each on a fresh tenantEnv configured by edit.
func forEachStore(t *testing.T, edit func(*Config), fn func(t *testing.T, e *tenantEnv)) {
	t.Helper()
	for _, b := range TestBackends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			fn(t, newTenantEnvStore(t, OpenTestStore(t, b), edit))
		})
	}
}
