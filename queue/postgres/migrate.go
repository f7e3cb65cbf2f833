package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/internal/migration"
)

//go:embed migrations/*.sql repeatable/*.sql
var migrationFS embed.FS

// MigrationLine is a sequence of migrations of its own, recorded in
// docket_migrations under its name: the engine's ("engine"), or that of
// something sharing the engine's database (a document store: "docs").
type MigrationLine = migration.Line

// engineLine is the engine's migration line: its tables in migrations/,
// its functions, triggers and views in repeatable/ (one file each, run
// again when it changes), nothing of the document service. Legacy maps it
// onto the single sequence of before the lines (see queue/internal/migration and
// docs/migrations.md).
var engineLine = MigrationLine{
	Name: "engine", FS: migrationFS, Dir: "migrations", RepeatableDir: "repeatable",
	Legacy: []int{1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // 0: not in the single sequence
}

// migrateLockKey is the pg_advisory_xact_lock key that serialises
// migrators ("docket" in ASCII).
const migrateLockKey = 0x646f636b6574

// migrationsTableSQL creates the record of applied migrations, one row
// per (line, version).
const migrationsTableSQL = `CREATE TABLE IF NOT EXISTS docket_migrations (
    line       text NOT NULL,
    version    int NOT NULL,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (line, version))`

// repeatablesTableSQL creates the record of the repeatable files run: the
// checksum of each file's text when it last ran.
const repeatablesTableSQL = `CREATE TABLE IF NOT EXISTS docket_repeatables (
    line       text NOT NULL,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (line, name))`

// legacyTableSQL reports whether docket_migrations is the single
// sequence's (version, name, applied_at), without a line.
const legacyTableSQL = `SELECT to_regclass('docket_migrations') IS NOT NULL AND NOT EXISTS (
    SELECT FROM pg_attribute WHERE attrelid = to_regclass('docket_migrations') AND attname = 'line' AND NOT attisdropped)`

// legacyConvertSQL turns the single sequence's record into the lines' one,
// its rows kept under the line "legacy".
const legacyConvertSQL = `ALTER TABLE docket_migrations RENAME TO docket_migrations_legacy;
ALTER INDEX docket_migrations_pkey RENAME TO docket_migrations_legacy_pkey;
` + migrationsTableSQL + `;
INSERT INTO docket_migrations (line, version, name, applied_at)
SELECT '` + migration.LegacyLine + `', version, name, applied_at FROM docket_migrations_legacy;
DROP TABLE docket_migrations_legacy`

// Migrate applies the engine's migrations (engineLine) not yet applied.
// See MigrateLine.
func (d *Driver) Migrate(ctx context.Context) error {
	return d.MigrateLine(ctx, engineLine)
}

// MigrateLine applies the migrations of line not yet recorded in
// docket_migrations, in order, and runs the line's repeatable files whose
// text changed since they last ran, each after the migration it needs
// (migration.Plan), all in one transaction: for the engine (Migrate) or
// for what shares its database and keeps a schema of its own (a document
// store's line, applied after the engine's). An advisory lock makes
// concurrent calls from many processes wait for each other; the later ones
// find nothing to do. On a database migrated by the single sequence of
// before the lines, the line's migrations that came from an applied
// version of it are recorded as applied, and not run again.
func (d *Driver) MigrateLine(ctx context.Context, line MigrationLine) error {
	migs, err := line.Migrations()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, err)
	}
	reps, err := line.Repeatables()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, err)
	}
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLockKey)); err != nil {
			return err
		}
		applied, err := appliedVersions(ctx, tx, line.Name, migs)
		if err != nil {
			return err
		}
		checksums, err := repeatableChecksums(ctx, tx, line.Name)
		if err != nil {
			return err
		}
		for _, step := range migration.Plan(migs, applied, reps, checksums) {
			if m := step.Migration; m != nil {
				if _, err := tx.Exec(ctx, m.SQL); err != nil {
					return fmt.Errorf("%03d_%s: %w", m.Version, m.Name, err)
				}
				_, err := tx.Exec(ctx, "INSERT INTO docket_migrations (line, version, name) VALUES ($1, $2, $3)", line.Name, m.Version, m.Name)
				if err != nil {
					return err
				}
				continue
			}
			r := step.Repeatable
			if _, err := tx.Exec(ctx, r.SQL); err != nil {
				return fmt.Errorf("repeatable %s: %w", r.Name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO docket_repeatables (line, name, checksum) VALUES ($1, $2, $3)
ON CONFLICT (line, name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`, line.Name, r.Name, r.Checksum)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, interpretError(err))
	}
	return nil
}

// repeatableChecksums returns, per repeatable file of line that ran, the
// checksum of the text it ran with.
func repeatableChecksums(ctx context.Context, tx pgx.Tx, line string) (map[string]string, error) {
	if _, err := tx.Exec(ctx, repeatablesTableSQL); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, "SELECT name, checksum FROM docket_repeatables WHERE line = $1", line)
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	var name, sum string
	_, err = pgx.ForEachRow(rows, []any{&name, &sum}, func() error {
		sums[name] = sum
		return nil
	})
	return sums, err
}

// appliedVersions returns the versions of line applied, after bringing
// docket_migrations to the lines' form and mapping the single sequence's
// versions onto line if it has none yet.
func appliedVersions(ctx context.Context, tx pgx.Tx, line string, migs []migration.Migration) (map[int]bool, error) {
	var legacy bool
	if err := tx.QueryRow(ctx, legacyTableSQL).Scan(&legacy); err != nil {
		return nil, err
	}
	if legacy {
		if _, err := tx.Exec(ctx, legacyConvertSQL); err != nil {
			return nil, fmt.Errorf("record migrations by line: %w", err)
		}
	} else if _, err := tx.Exec(ctx, migrationsTableSQL); err != nil {
		return nil, err
	}
	versions, err := lineVersions(ctx, tx, line)
	if err != nil || len(versions) > 0 {
		return versions, err
	}
	var old int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM docket_migrations WHERE line = $1`,
		migration.LegacyLine).Scan(&old); err != nil {
		return nil, err
	}
	for _, m := range migration.FromLegacy(migs, old) {
		_, err := tx.Exec(ctx, `INSERT INTO docket_migrations (line, version, name, applied_at)
SELECT $1, $2, $3, applied_at FROM docket_migrations WHERE line = $4 AND version = $5`,
			line, m.Version, m.Name, migration.LegacyLine, m.Legacy)
		if err != nil {
			return nil, err
		}
		versions[m.Version] = true
	}
	return versions, nil
}

// lineVersions returns the versions of line recorded.
func lineVersions(ctx context.Context, tx pgx.Tx, line string) (map[int]bool, error) {
	rows, err := tx.Query(ctx, "SELECT version FROM docket_migrations WHERE line = $1", line)
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

// MigrateURL connects to connString, brings the engine's schema up to date
// and disconnects: for tools and for test templates
// (pgtest.Options{Template: postgres.MigrateURL}).
func MigrateURL(connString string) error {
	ctx := context.Background()
	d, err := Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Migrate(ctx)
}
