package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

func TestMain(m *testing.M) {
	// Prepared transactions and logical slots for TestDriver_Wraparound.
	pgtest.MainParallel(m, 8, pgtest.Options{Template: postgres.MigrateURL,
		Settings: map[string]string{"max_prepared_transactions": "2", "wal_level": "logical"}})
}

// newDriver returns a driver on a fresh, migrated database.
func newDriver(t testing.TB) *postgres.Driver {
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
	return postgres.New(pool)
}

// verifyNoLeaks fails t if goroutines started during the test outlive it.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}
