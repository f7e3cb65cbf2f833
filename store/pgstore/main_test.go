package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/store/pgstore"
)

func TestMain(m *testing.M) {
	pgtest.MainParallel(m, 8, pgtest.Options{Template: pgstore.MigrateURL})
}

// testStore is a document store and the engine driver it shares its
// database with.
type testStore struct {
	*pgstore.Store
	*postgres.Driver
}

// Migrate migrates the store (and so the engine).
func (s *testStore) Migrate(ctx context.Context) error { return s.Store.Migrate(ctx) }

// storeOn returns the store over a driver on pool.
func storeOn(pool *pgxpool.Pool) *testStore {
	d := postgres.New(pool)
	return &testStore{Store: pgstore.New(d), Driver: d}
}

// newStore returns a store on a fresh, migrated database.
func newStore(t testing.TB) *testStore {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return storeOn(pool)
}

// fixture is a store on a fresh database and the test's context.
type fixture struct {
	t   *testing.T
	ctx context.Context
	d   *testStore
}

func setup(t *testing.T) *fixture {
	t.Helper()
	return &fixture{t: t, ctx: t.Context(), d: newStore(t)}
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.d.Pool().Exec(f.ctx, sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// fillChunks runs fill, an INSERT of many chunks, without the full-text
// index, then builds the index from its own definition: maintained row by
// row (fastupdate is off), the index took most of the time of a fill of
// 10^6 chunks.
func (f *fixture) fillChunks(fill string) {
	f.t.Helper()
	var def string
	if err := f.d.Pool().QueryRow(f.ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'docket_chunks_tsv'`).Scan(&def); err != nil {
		f.t.Fatal(err)
	}
	f.exec(`DROP INDEX docket_chunks_tsv`)
	f.exec(fill)
	f.exec(def)
}
