package sqlitestore_test

import (
	"context"
	"testing"

	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/sqlitestore"
)

// testStore is a document store and the engine driver it shares its
// database with.
type testStore struct {
	*sqlitestore.Store
	*sqlite.Driver
}

// Migrate migrates the store (and so the engine).
func (s *testStore) Migrate(ctx context.Context) error { return s.Store.Migrate(ctx) }

// storeOf returns the store over d.
func storeOf(d *sqlite.Driver) *testStore {
	return &testStore{Store: sqlitestore.New(d), Driver: d}
}

// setup opens a fresh, migrated database in a temporary directory and
// closes it when the test ends.
func setup(t testing.TB) *testStore {
	t.Helper()
	d, err := sqlite.Open(context.Background(), storepair.SQLitePath(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	s := storeOf(d)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}
