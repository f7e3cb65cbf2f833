package queuetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{Template: func(conn string) error {
		ctx := context.Background()
		d, err := postgres.Open(ctx, conn)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Migrate(ctx)
	}})
}

// store is a fresh, migrated store and a way to begin its native
// transactions, as an application's tests have them.
type store struct {
	client *queue.Client
	// begin starts a native transaction (pgx.Tx, *sql.Tx).
	begin func(ctx context.Context) (tx any, commit, rollback func() error, err error)
}

// forEachStore runs fn as a parallel subtest on SQLite and PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, s *store)) {
	t.Helper()
	for name, open := range map[string]func(t *testing.T) *store{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open(t))
		})
	}
}

func openSQLite(t *testing.T) *store {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db := d.DB()
	return &store{
		client: queue.NewClient(d, queue.ClientConfig{}),
		begin: func(ctx context.Context) (any, func() error, func() error, error) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return nil, nil, nil, err
			}
			return tx, tx.Commit, tx.Rollback, nil
		},
	}
}

func openPostgres(t *testing.T) *store {
	t.Helper()
	ctx := context.Background()
	d, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	pool := d.Pool()
	return &store{
		client: queue.NewClient(d, queue.ClientConfig{}),
		begin: func(ctx context.Context) (any, func() error, func() error, error) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			bg := context.WithoutCancel(ctx)
			return tx, func() error { return tx.Commit(bg) }, func() error { return tx.Rollback(bg) }, nil
		},
	}
}

// fakeTB records the failure of a helper under test instead of failing
// the test: Fatalf ends the helper's goroutine, as testing.T's does.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// failure runs fn with a fakeTB and returns its failure message, "" when
// it passed.
func failure(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}
