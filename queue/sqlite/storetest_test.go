package sqlite_test

import (
	"context"
	"testing"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/drivertest"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/queue/sqlite/sqlitetest"
)

// setup opens a fresh, migrated database in a temporary directory and
// closes it when the test ends.
func setup(t testing.TB) *sqlite.Driver {
	t.Helper()
	return openAt(t, sqlitetest.Migrated(t))
}

func openAt(t testing.TB, path string) *sqlite.Driver {
	t.Helper()
	d, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return d
}

func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.RunConfig(t, drivertest.Config{
		NewDriver: func(t *testing.T) driver.Driver { return setup(t) },
		BeginNative: func(t *testing.T, d driver.Driver) drivertest.NativeTx {
			tx, err := d.(*sqlite.Driver).DB().BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatalf("BeginTx: %v", err)
			}
			return drivertest.NativeTx{Tx: tx, Commit: tx.Commit, Rollback: tx.Rollback}
		},
	})
}
