package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLockKey is the pg_advisory_xact_lock key that serialises
// migrators ("docket" in ASCII).
const migrateLockKey = 0x646f636b6574

// migration is one numbered file of migrations/: NNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// Migrate applies the migrations not yet recorded in docket_migrations, in
// order, in one transaction. An advisory lock makes concurrent calls from
// many processes wait for each other; the later ones find nothing to do.
func (d *Driver) Migrate(ctx context.Context) error {
	migs, err := migrations()
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLockKey)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS docket_migrations (
			version    int PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`)
		if err != nil {
			return err
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range migs {
			if applied[m.version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("%03d_%s: %w", m.version, m.name, err)
			}
			_, err := tx.Exec(ctx, "INSERT INTO docket_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", interpretError(err))
	}
	return nil
}

func appliedVersions(ctx context.Context, tx pgx.Tx) (map[int]bool, error) {
	rows, err := tx.Query(ctx, "SELECT version FROM docket_migrations")
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[int(v)] = true
	}
	return applied, nil
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	paths, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var migs []migration
	for _, p := range paths {
		base := strings.TrimSuffix(strings.TrimPrefix(p, "migrations/"), ".sql")
		num, name, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: want NNN_name.sql", p)
		}
		b, err := migrationFS.ReadFile(p)
		if err != nil {
			return nil, err
		}
		migs = append(migs, migration{version: version, name: name, sql: string(b)})
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i := 1; i < len(migs); i++ {
		if migs[i].version == migs[i-1].version {
			return nil, fmt.Errorf("two migrations numbered %d", migs[i].version)
		}
	}
	return migs, nil
}

// MigrateURL connects to connString, brings its schema up to date and
// disconnects: for tools and for test templates
// (testpg.Options{Template: postgres.MigrateURL}).
func MigrateURL(connString string) error {
	ctx := context.Background()
	d, err := Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Migrate(ctx)
}
