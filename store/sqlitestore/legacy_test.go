package sqlitestore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for the legacy migrations

	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/sqlitestore"
)

// legacyApplied is when the simulated single sequence applied its
// migrations (unix microseconds): a row that keeps it was mapped, not run
// again.
const legacyApplied = 946684800000000

// TestMigrate_Legacy: a database migrated by the single sequence of before
// the lines (testdata/legacy: 0001-0010), to each of its versions, is
// upgraded by Store.Migrate: what the old versions applied is recorded on
// both lines and not run again, the rest is applied, and sqlite_master is
// a fresh install's.
func TestMigrate_Legacy(t *testing.T) {
	t.Parallel()
	fresh := masterDump(t, setup(t).DB())
	// The old version each migration came from; 0: none (made after).
	legacy := map[string][]int{"engine": {1, 4, 5, 6, 7, 9, 0, 0, 0}, "docs": {2, 3, 8, 10, 0, 0, 0}}
	for v := 1; v <= 10; v++ {
		t.Run(strconv.Itoa(v), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "docket.db")
			migrateLegacy(t, path, v)
			d, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			if err := sqlitestore.New(d).Migrate(ctx); err != nil {
				t.Fatalf("Migrate after legacy %04d: %v", v, err)
			}
			rows, err := d.DB().QueryContext(ctx, `SELECT line, version, applied_at FROM docket_migrations WHERE line <> 'legacy'`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			counts := map[string]int{}
			for rows.Next() {
				var line string
				var version int
				var at int64
				if err := rows.Scan(&line, &version, &at); err != nil {
					t.Fatal(err)
				}
				counts[line]++
				old := legacy[line][version-1]
				mapped := old != 0 && old <= v
				if (at == legacyApplied) != mapped {
					t.Errorf("legacy %04d: %s %03d applied at %d: want mapped %t", v, line, version, at, mapped)
				}
			}
			if rows.Err() != nil || counts["engine"] != 9 || counts["docs"] != 7 || len(counts) != 2 {
				t.Errorf("legacy %04d: recorded %v (%v), want engine 9 and docs 7", v, counts, rows.Err())
			}
			if got := masterDump(t, d.DB()); !slices.Equal(got, fresh) {
				t.Errorf("sqlite_master after legacy %04d and Migrate:\n%s\nwant a fresh install's:\n%s",
					v, strings.Join(got, "\n"), strings.Join(fresh, "\n"))
			}
		})
	}
}

// migrateLegacy applies testdata/legacy up to version upTo to a new
// database at path, as the single sequence's Migrate did.
func migrateLegacy(t *testing.T, path string, upTo int) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS docket_schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.sql"))
	if err != nil || len(files) != 10 {
		t.Fatalf("testdata/legacy: %d files, %v", len(files), err)
	}
	for _, f := range files[:upTo] {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".sql")
		version, _ := strconv.Atoi(base[:4])
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := db.Exec(`INSERT INTO docket_schema_migrations VALUES (?, ?, ?)`, version, base, legacyApplied); err != nil {
			t.Fatal(err)
		}
	}
}

// masterDump returns sqlite_master (type, name, table and SQL of every
// object), sorted.
func masterDump(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
