package pgstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/store/pgstore"
)

// legacyApplied is when the simulated single sequence applied its
// migrations: a row that keeps it was mapped, not run again.
var legacyApplied = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// The single sequence's files, 001-015 (testdata/legacy, copied from
// postgres/migrations before the lines), and how many of them fall into
// each line (docs/migrations.md).
const (
	legacyVersions = 15
	engineVersions = 23 // 012 on: made after the single sequence
	docsVersions   = 10 // 008 on: made after the single sequence
)

// TestMigrate_Legacy: a database migrated by the single sequence of before
// the lines, to each of its versions, is upgraded by Store.Migrate: what
// the old versions applied is recorded on both lines and not run again,
// the rest is applied, and the schema is a fresh install's.
func TestMigrate_Legacy(t *testing.T) {
	t.Parallel()
	fresh := schemaDump(t, newStore(t).Pool())
	for v := 1; v <= legacyVersions; v++ {
		t.Run(strconv.Itoa(v), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pool, err := pgxpool.New(ctx, pgtest.NewEmptyDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			migrateLegacy(t, pool, v)
			s := pgstore.New(postgres.New(pool))
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate after legacy %03d: %v", v, err)
			}
			checkLines(t, pool, v)
			if got := schemaDump(t, pool); !slices.Equal(got, fresh) {
				t.Errorf("schema after legacy %03d and Migrate differs from a fresh install's:\n%s", v, diffLines(fresh, got))
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}
		})
	}
}

// migrateLegacy applies testdata/legacy up to version upTo as the single
// sequence's Migrate did, recording each at legacyApplied.
func migrateLegacy(t *testing.T, pool *pgxpool.Pool, upTo int) {
	t.Helper()
	ctx := t.Context()
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.sql"))
	if err != nil || len(files) != legacyVersions {
		t.Fatalf("testdata/legacy: %d files, %v", len(files), err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE docket_migrations (
			version    int PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		for _, f := range files {
			num, name, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".sql"), "_")
			version, _ := strconv.Atoi(num)
			if version > upTo {
				break
			}
			sql, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO docket_migrations VALUES ($1, $2, $3)`, version, name, legacyApplied); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("legacy migrations to %03d: %v", upTo, err)
	}
}

// checkLines checks docket_migrations after the upgrade of a database at
// legacy version v: every version of both lines recorded once, those the
// legacy versions held at their time (mapped), the others since.
func checkLines(t *testing.T, pool *pgxpool.Pool, v int) {
	t.Helper()
	engine := []int{1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 15}
	docs := []int{3, 4, 5, 7, 11, 13, 14}
	rows, err := pool.Query(t.Context(), `SELECT line, version, applied_at FROM docket_migrations WHERE line <> 'legacy' ORDER BY line, version`)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var line string
	var version int
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&line, &version, &at}, func() error {
		counts[line]++
		legacy := map[string][]int{"engine": engine, "docs": docs}[line]
		mapped := version <= len(legacy) && legacy[version-1] <= v
		if got := at.Equal(legacyApplied); got != mapped {
			t.Errorf("legacy %03d: %s %03d applied at %s: mapped %t, want %t", v, line, version, at, got, mapped)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts["engine"] != engineVersions || counts["docs"] != docsVersions || len(counts) != 2 {
		t.Errorf("legacy %03d: recorded %v, want engine %d and docs %d", v, counts, engineVersions, docsVersions)
	}
}

// Each function and trigger of the document store is defined once, in its
// repeatable file; no migration creates one.
func TestMigrations_CodeInRepeatableFiles(t *testing.T) {
	t.Parallel()
	if err := pgstore.DocsLine().CheckDefinitions(); err != nil {
		t.Fatal(err)
	}
}
