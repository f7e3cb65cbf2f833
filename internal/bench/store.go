package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/sqlite"
)

// Store hands each scenario a fresh, migrated, empty store.
type Store interface {
	Open(ctx context.Context) (*Env, error)
}

// Env is one scenario's store.
type Env struct {
	// Driver is open and migrated.
	Driver driver.Driver
	// Describe names the store, e.g. "postgres 15.8".
	Describe string
	// OpenPeer opens a second driver on the same database, as another
	// process would; nil when the store serves one process.
	OpenPeer func(ctx context.Context) (driver.Driver, error)
	// Settle brings the store to rest after a bulk load: vacuum and
	// fresh planner statistics (what autovacuum does soon after), then a
	// checkpoint, so the next measurement does not pay for the load's
	// background I/O. Nil when the store has nothing to do.
	Settle func(ctx context.Context) error
	// Close closes the driver and removes the store.
	Close func() error
}

// PostgresStore creates a database per scenario on the server a connection
// string names, and drops it afterwards. It drops nothing it did not create.
type PostgresStore struct {
	connString string
}

// NewPostgresStore returns a store on the server connString names (URL or
// keyword/value form). Its user needs the CREATEDB privilege.
func NewPostgresStore(connString string) *PostgresStore {
	return &PostgresStore{connString: connString}
}

// Open creates database docket_bench_<random>, migrates it and returns it.
func (s *PostgresStore) Open(ctx context.Context) (*Env, error) {
	name := "docket_bench_" + randomHex(6)
	var version string
	err := s.admin(ctx, func(conn *pgx.Conn) error {
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create scratch database (the user needs CREATEDB): %w", err)
	}
	drop := func() error {
		return s.admin(context.WithoutCancel(ctx), func(conn *pgx.Conn) error {
			_, err := conn.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			return err
		})
	}
	connString, err := withDatabase(s.connString, name)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	d, err := openPostgres(ctx, connString)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	return &Env{
		Driver:   d,
		Describe: "postgres " + strings.Fields(version + " ?")[0],
		OpenPeer: func(ctx context.Context) (driver.Driver, error) { return openPostgres(ctx, connString) },
		Settle: func(ctx context.Context) error {
			if _, err := d.Pool().Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
				return err
			}
			_, err := d.Pool().Exec(ctx, "CHECKPOINT")
			return err
		},
		Close: func() error { return errors.Join(d.Close(), drop()) },
	}, nil
}

func openPostgres(ctx context.Context, connString string) (*postgres.Driver, error) {
	d, err := postgres.Open(ctx, connString)
	if err != nil {
		return nil, err
	}
	if err := d.Migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate: %w", err), d.Close())
	}
	return d, nil
}

// admin runs fn on a connection to the database the connection string
// names.
func (s *PostgresStore) admin(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, s.connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn)
}

// withDatabase returns connString with its database replaced by dbname.
func withDatabase(connString, dbname string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("parse database url: %w", err)
		}
		u.Path = "/" + dbname
		u.RawPath = ""
		return u.String(), nil
	}
	return connString + " dbname=" + dbname, nil // a later keyword wins
}

// SQLiteStore creates a database file per scenario in a new temporary
// directory, removed afterwards.
type SQLiteStore struct {
	// Dir is where the temporary directories go. Default os.TempDir().
	Dir string
}

// Open creates and migrates a new SQLite database.
func (s *SQLiteStore) Open(ctx context.Context) (*Env, error) {
	dir, err := os.MkdirTemp(s.Dir, "docket-bench-")
	if err != nil {
		return nil, err
	}
	d, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := d.Migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate: %w", err), d.Close(), os.RemoveAll(dir))
	}
	return &Env{
		Driver:   d,
		Describe: "sqlite",
		Close:    func() error { return errors.Join(d.Close(), os.RemoveAll(dir)) },
	}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
