// Package storepair pairs an engine driver with the document store over it
// as one value that is both a queue.Driver and a docket.Store (the stores
// are store/pgstore and store/sqlitestore), for tests and tools that hand
// one object to both sides. Migrate migrates both lines.
package storepair

import (
	"context"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/queue/sqlite/sqlitetest"
	"github.com/docketq/docket/store/pgstore"
	"github.com/docketq/docket/store/sqlitestore"
)

var (
	_ driver.Driver = (*Postgres)(nil)
	_ docket.Store  = (*Postgres)(nil)
	_ driver.Driver = (*SQLite)(nil)
	_ docket.Store  = (*SQLite)(nil)
)

// Postgres is a PostgreSQL driver and its document store.
type Postgres struct {
	*pgstore.Store
	*postgres.Driver
}

// NewPostgres pairs d with pgstore.New(d).
func NewPostgres(d *postgres.Driver) *Postgres {
	return &Postgres{Store: pgstore.New(d), Driver: d}
}

// Migrate migrates the engine, then the document store.
func (p *Postgres) Migrate(ctx context.Context) error { return p.Store.Migrate(ctx) }

// NotifyQueueUsage is the driver's.
func (p *Postgres) NotifyQueueUsage(ctx context.Context) (float64, error) {
	return p.Driver.NotifyQueueUsage(ctx)
}

// Wraparound is the document store's (the driver's, as a docket.Wraparound).
func (p *Postgres) Wraparound(ctx context.Context) (docket.Wraparound, error) {
	return p.Store.Wraparound(ctx)
}

// SQLite is a SQLite driver and its document store.
type SQLite struct {
	*sqlitestore.Store
	*sqlite.Driver
}

// NewSQLite pairs d with sqlitestore.New(d).
func NewSQLite(d *sqlite.Driver) *SQLite {
	return &SQLite{Store: sqlitestore.New(d), Driver: d}
}

// Migrate migrates the engine, then the document store.
func (s *SQLite) Migrate(ctx context.Context) error { return s.Store.Migrate(ctx) }

// SQLitePath returns the path of a new SQLite database with the engine's
// and the document store's schema: a copy of one migrated once per test
// process (sqlitetest.Copy), far cheaper than migrating each.
func SQLitePath(tb testing.TB) string {
	tb.Helper()
	return sqlitetest.Copy(tb, "engine+documents", func(ctx context.Context, path string) error {
		d, err := sqlite.Open(ctx, path)
		if err != nil {
			return err
		}
		if err := NewSQLite(d).Migrate(ctx); err != nil {
			_ = d.Close()
			return err
		}
		return d.Close()
	})
}
