package search_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
)

// envKeep names the directory in which BenchmarkSearch keeps its loaded
// stores, so that a later run measures them again without loading them
// (a 10^6 PostgreSQL load takes tens of minutes): SQLite files
// search-<n>.db there, and PostgreSQL databases docket_search_<dir>_<n>
// (dir: the directory's name) on the server of DOCKET_TEST_DATABASE_URL (required: the throwaway cluster
// dies with the test process). A kept store is migrated before use, so a
// new migration runs on the loaded data as it would on a deployment's.
const envKeep = "DOCKET_SEARCH_KEEP"

// keptMarker is the table that says a kept store is fully loaded.
const keptMarker = "docket_search_bench_loaded"

// openKept opens the kept store of size n, creating it when missing, and
// reports whether it is already loaded. ok is false when nothing is kept.
func openKept(b *testing.B, store string, n int) (s docket.Store, loaded, ok bool) {
	b.Helper()
	dir := os.Getenv(envKeep)
	if dir == "" {
		return nil, false, false
	}
	ctx := context.Background()
	switch store {
	case "sqlite":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		dRaw, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("search-%d.db", n)))
		if err != nil {
			b.Fatal(err)
		}
		d := storepair.NewSQLite(dRaw)
		b.Cleanup(func() { _ = d.Close() })
		if err := d.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		var name string
		err = d.DB().QueryRowContext(ctx, `SELECT name FROM sqlite_master WHERE name = ?`, keptMarker).Scan(&name)
		return d, err == nil, true
	case "postgres":
		base := os.Getenv(pgtest.EnvDatabaseURL)
		if base == "" {
			b.Fatalf("%s on PostgreSQL needs %s (an external server)", envKeep, pgtest.EnvDatabaseURL)
		}
		db := fmt.Sprintf("docket_search_%s_%d", keptName(dir), n)
		createDatabase(b, base, db)
		dRaw, err := postgres.Open(ctx, withDatabase(base, db))
		if err != nil {
			b.Fatal(err)
		}
		d := storepair.NewPostgres(dRaw)
		b.Cleanup(func() { _ = d.Close() })
		if err := d.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		var found *string
		if err := d.Pool().QueryRow(ctx, `SELECT to_regclass($1)::text`, keptMarker).Scan(&found); err != nil {
			b.Fatal(err)
		}
		return d, found != nil, true
	}
	b.Fatalf("unknown store %s", store)
	return nil, false, false
}

// markKept records that a kept store is fully loaded.
func markKept(b *testing.B, s docket.Store) {
	b.Helper()
	var err error
	q := `CREATE TABLE ` + keptMarker + ` (done int)`
	switch d := s.(type) {
	case *storepair.Postgres:
		_, err = d.Pool().Exec(context.Background(), q)
	case *storepair.SQLite:
		_, err = d.DB().ExecContext(context.Background(), q)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// createDatabase creates database db on the server of base unless it
// exists.
func createDatabase(b *testing.B, base, db string) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
}

// withDatabase returns the connection string base (a URL or keyword/value
// pairs) naming database db.
func withDatabase(base, db string) string {
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			return base
		}
		u.Path = "/" + db
		return u.String()
	}
	return base + " dbname=" + db // a later keyword wins
}

// keptName is the name of the directory dir in a database name: lower-case
// letters and digits, others as underscores.
func keptName(dir string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(filepath.Base(dir)))
}
