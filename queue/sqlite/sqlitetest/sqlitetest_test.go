package sqlitetest

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// TestCopy: build runs once per key; each copy is a database of its own
// holding what build made.
func TestCopy(t *testing.T) {
	var builds atomic.Int32
	build := func(ctx context.Context, path string) error {
		builds.Add(1)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE t (x); INSERT INTO t VALUES (1)`); err != nil {
			return err
		}
		return db.Close()
	}
	a, b := Copy(t, t.Name(), build), Copy(t, t.Name(), build)
	if n := builds.Load(); n != 1 || a == b {
		t.Fatalf("%d builds, paths %s and %s; want 1 build, two paths", n, a, b)
	}
	da, err := sql.Open("sqlite", a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Close()
	if _, err := da.Exec(`INSERT INTO t VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", b)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the other copy holds %d rows (%v), want the template's 1", n, err)
	}
}

// TestMigrated: the copy opens as a migrated engine database.
func TestMigrated(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM docket_jobs`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("docket_jobs: %d rows, %v; want an empty table", n, err)
	}
}

// TestBuildImage_OpenDatabase: a build that leaves its database open, its
// writes in the write-ahead log, is refused rather than copied without them.
func TestBuildImage_OpenDatabase(t *testing.T) {
	var left *sql.DB
	defer func() {
		if left != nil {
			_ = left.Close()
		}
	}()
	_, err := buildImage(func(ctx context.Context, path string) error {
		db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)")
		if err != nil {
			return err
		}
		left = db
		_, err = db.ExecContext(ctx, `CREATE TABLE t (x); INSERT INTO t VALUES (1)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "close the database") {
		t.Fatalf("build left open: %v, want refused", err)
	}
}
