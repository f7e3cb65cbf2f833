package sqlite

import (
	"context"
	"embed"
	"fmt"

	"github.com/docketq/docket/queue/internal/migration"
)

//go:embed migrations/*.sql repeatable/*.sql
var migrationFS embed.FS

// MigrationLine is a sequence of migrations of its own, recorded in
// docket_migrations under its name: the engine's ("engine"), or that of
// something sharing the engine's database (a document store: "docs").
type MigrationLine = migration.Line

// engineLine is the engine's migration line: its tables in migrations/,
// its triggers in repeatable/ (one file each, run again when it changes),
// nothing of the document service. Legacy maps it onto the single sequence
// of before the lines (docs/migrations.md).
var engineLine = MigrationLine{
	Name: "engine", FS: migrationFS, Dir: "migrations", RepeatableDir: "repeatable",
	Legacy: []int{1, 4, 5, 6, 7, 9, 0, 0, 0}, // 0: not in the single sequence
}

// migrationsTableSQL creates the record of applied migrations, one row
// per (line, version).
const migrationsTableSQL = `
CREATE TABLE IF NOT EXISTS docket_migrations (
	line       TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL,
	PRIMARY KEY (line, version)
) STRICT, WITHOUT ROWID`

// repeatablesTableSQL creates the record of the repeatable files run: the
// checksum of each file's text when it last ran.
const repeatablesTableSQL = `
CREATE TABLE IF NOT EXISTS docket_repeatables (
	line       TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	checksum   TEXT    NOT NULL,
	applied_at INTEGER NOT NULL,
	PRIMARY KEY (line, name)
) STRICT, WITHOUT ROWID`

// legacyConvertSQL keeps the single sequence's record
// (docket_schema_migrations) under the line "legacy" and drops its table.
const legacyConvertSQL = `
INSERT INTO docket_migrations (line, version, name, applied_at)
SELECT '` + migration.LegacyLine + `', version, name, applied_at FROM docket_schema_migrations;
DROP TABLE docket_schema_migrations`

// Migrate applies the engine's migrations not yet applied (see
// MigrateLine), then readies the driver: its prepared statements, and at
// the first call the end of a dead process's leases.
func (d *Driver) Migrate(ctx context.Context) error {
	if err := d.MigrateLine(ctx, engineLine); err != nil {
		return err
	}
	if err := d.stmts.prepare(ctx, d.writer); err != nil {
		return err
	}
	var err error
	d.orphans.Do(func() { err = d.expireOrphans(ctx) })
	return err
}

// MigrateLine applies the migrations of line not yet recorded in
// docket_migrations, and runs the line's repeatable files whose text
// changed since they last ran, each after the migration it needs
// (migration.Plan); each step in its own write transaction, for the engine
// (Migrate) or for what shares its database and keeps a schema of its own
// (a document store's line, applied after the engine's). Write
// transactions run one at a time (and only this process opens the file),
// so concurrent calls apply each migration once. On a database migrated
// by the single sequence of before the lines, the line's migrations that
// came from an applied version of it are recorded as applied, and not run
// again.
func (d *Driver) MigrateLine(ctx context.Context, line MigrationLine) error {
	ms, err := line.Migrations()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, err)
	}
	reps, err := line.Repeatables()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, err)
	}
	var (
		applied   map[int]bool
		checksums map[string]string
	)
	err = d.exec.write(ctx, func(t *txn) error {
		if err := mapLegacy(ctx, t, line.Name, ms); err != nil {
			return err
		}
		if _, err := t.exec(ctx, repeatablesTableSQL); err != nil {
			return err
		}
		if applied, err = lineVersions(ctx, t, line.Name); err != nil {
			return err
		}
		checksums, err = repeatableChecksums(ctx, t, line.Name)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", line.Name, err)
	}
	for _, step := range migration.Plan(ms, applied, reps, checksums) {
		if m := step.Migration; m != nil {
			err := d.exec.write(ctx, func(t *txn) error {
				var applied int
				err := t.queryRow(ctx, `SELECT count(*) FROM docket_migrations WHERE line = ? AND version = ?`, line.Name, m.Version).Scan(&applied)
				if err != nil || applied > 0 {
					return err
				}
				if _, err := t.exec(ctx, m.SQL); err != nil {
					return err
				}
				_, err = t.exec(ctx, `INSERT INTO docket_migrations (line, version, name, applied_at) VALUES (?, ?, ?, ?)`,
					line.Name, m.Version, m.Name, t.now)
				return err
			})
			if err != nil {
				return fmt.Errorf("migrate %s %03d_%s: %w", line.Name, m.Version, m.Name, err)
			}
			continue
		}
		r := step.Repeatable
		err := d.exec.write(ctx, func(t *txn) error {
			var sum string
			err := t.queryRow(ctx, `SELECT coalesce(max(checksum), '') FROM docket_repeatables WHERE line = ? AND name = ?`, line.Name, r.Name).Scan(&sum)
			if err != nil || sum == r.Checksum { // a concurrent call ran it
				return err
			}
			if _, err := t.exec(ctx, r.SQL); err != nil {
				return err
			}
			_, err = t.exec(ctx, `INSERT INTO docket_repeatables (line, name, checksum, applied_at) VALUES (?, ?, ?, ?)
ON CONFLICT (line, name) DO UPDATE SET checksum = excluded.checksum, applied_at = excluded.applied_at`,
				line.Name, r.Name, r.Checksum, t.now)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s repeatable %s: %w", line.Name, r.Name, err)
		}
	}
	return nil
}

// lineVersions returns the versions of line recorded.
func lineVersions(ctx context.Context, t *txn, line string) (map[int]bool, error) {
	rows, err := t.query(ctx, `SELECT version FROM docket_migrations WHERE line = ?`, line)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// repeatableChecksums returns, per repeatable file of line that ran, the
// checksum of the text it ran with.
func repeatableChecksums(ctx context.Context, t *txn, line string) (map[string]string, error) {
	rows, err := t.query(ctx, `SELECT name, checksum FROM docket_repeatables WHERE line = ?`, line)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sums := map[string]string{}
	for rows.Next() {
		var name, sum string
		if err := rows.Scan(&name, &sum); err != nil {
			return nil, err
		}
		sums[name] = sum
	}
	return sums, rows.Err()
}

// mapLegacy creates docket_migrations, moves the single sequence's record
// into it, and records as applied the migrations of line that came from
// its applied versions, unless line has rows already.
func mapLegacy(ctx context.Context, t *txn, line string, ms []migration.Migration) error {
	if _, err := t.exec(ctx, migrationsTableSQL); err != nil {
		return err
	}
	var legacyTable int
	err := t.queryRow(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'docket_schema_migrations'`).Scan(&legacyTable)
	if err != nil {
		return err
	}
	if legacyTable > 0 {
		if _, err := t.exec(ctx, legacyConvertSQL); err != nil {
			return fmt.Errorf("record migrations by line: %w", err)
		}
	}
	var mine, old int
	err = t.queryRow(ctx, `SELECT count(*) FILTER (WHERE line = ?), coalesce(max(version) FILTER (WHERE line = ?), 0)
FROM docket_migrations`, line, migration.LegacyLine).Scan(&mine, &old)
	if err != nil || mine > 0 {
		return err
	}
	for _, m := range migration.FromLegacy(ms, old) {
		_, err := t.exec(ctx, `INSERT INTO docket_migrations (line, version, name, applied_at)
SELECT ?, ?, ?, applied_at FROM docket_migrations WHERE line = ? AND version = ?`,
			line, m.Version, m.Name, migration.LegacyLine, m.Legacy)
		if err != nil {
			return err
		}
	}
	return nil
}
