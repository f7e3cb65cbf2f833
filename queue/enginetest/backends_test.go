package queue_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/queue/sqlite/sqlitetest"
)

func TestMain(m *testing.M) {
	backends = append(backends,
		struct {
			name string
			open func(t *testing.T) *store
		}{"postgres", openPostgres},
		struct {
			name string
			open func(t *testing.T) *store
		}{"sqlite", openSQLite},
	)
	pgtest.Main(m, pgtest.Options{Template: func(conn string) error {
		ctx := context.Background()
		d, err := postgres.Open(ctx, conn)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.Migrate(ctx); err != nil {
			return err
		}
		_, err = d.Pool().Exec(ctx, `CREATE TABLE effects (job_id bigint PRIMARY KEY)`)
		return err
	}})
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
		driver: d,
		begin: func(ctx context.Context) (any, func() error, func() error, error) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			bg := context.WithoutCancel(ctx)
			return tx, func() error { return tx.Commit(bg) }, func() error { return tx.Rollback(bg) }, nil
		},
		addEffect: func(ctx context.Context, tx any, id int64) error {
			_, err := tx.(pgx.Tx).Exec(ctx, `INSERT INTO effects (job_id) VALUES ($1)`, id)
			return err
		},
		countEffects: func(ctx context.Context) (n int, err error) {
			err = pool.QueryRow(ctx, `SELECT count(*) FROM effects`).Scan(&n)
			return n, err
		},
	}
}

func openSQLite(t *testing.T) *store {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db := d.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE effects (job_id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return &store{
		driver: d,
		begin: func(ctx context.Context) (any, func() error, func() error, error) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return nil, nil, nil, err
			}
			return tx, tx.Commit, tx.Rollback, nil
		},
		addEffect: func(ctx context.Context, tx any, id int64) error {
			_, err := tx.(*sql.Tx).ExecContext(ctx, `INSERT INTO effects (job_id) VALUES (?)`, id)
			return err
		},
		countEffects: func(ctx context.Context) (n int, err error) {
			err = db.QueryRowContext(ctx, `SELECT count(*) FROM effects`).Scan(&n)
			return n, err
		},
	}
}

var _ driver.Driver = (*postgres.Driver)(nil)
