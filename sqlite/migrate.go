package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/, named NNNN_description.sql.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a version number and '_'", base)
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

const versionTableSQL = `
CREATE TABLE IF NOT EXISTS docket_schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`

// Migrate applies the migrations not yet applied, each in its own write
// transaction. Write transactions run one at a time (and only this
// process opens the file), so concurrent calls apply each migration once.
func (d *Driver) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		err := d.exec.write(ctx, func(t *txn) error {
			if _, err := t.exec(ctx, versionTableSQL); err != nil {
				return err
			}
			var applied int
			err := t.queryRow(ctx, `SELECT count(*) FROM docket_schema_migrations WHERE version = ?`, m.version).Scan(&applied)
			if err != nil || applied > 0 {
				return err
			}
			if _, err := t.exec(ctx, m.sql); err != nil {
				return err
			}
			_, err = t.exec(ctx, `INSERT INTO docket_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, t.now)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	if err := d.stmts.prepare(ctx, d.writer); err != nil {
		return err
	}
	d.orphans.Do(func() { err = d.expireOrphans(ctx) })
	return err
}
