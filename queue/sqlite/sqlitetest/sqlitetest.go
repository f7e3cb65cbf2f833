// Package sqlitetest gives tests fresh SQLite databases cheaply. Running
// every migration costs a new database about a tenth of a CPU-second under
// the race detector, and a suite opens hundreds; a copy of a database
// migrated once per test process costs a few milliseconds. Each copy is a
// file of its own in the test's temporary directory: tests stay as
// isolated as with a database made from nothing.
//
//	d, err := sqlite.Open(ctx, sqlitetest.Migrated(t))
//
// A package whose databases need more than the engine's schema (the
// document store's, fixtures) names its own template with Copy.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// template is one database image, built at most once per process.
type template struct {
	once  sync.Once
	image []byte
	err   error
}

var (
	mu        sync.Mutex
	templates = map[string]*template{}
)

// Copy returns the path of a new database file, in a temporary directory
// of tb, holding what build leaves in the database it makes at the path it
// is given. build runs once per process for each key (the first caller's
// build; every caller of a key must build the same thing), and must close
// the database before it returns, so that everything it wrote is in the
// file, not in a write-ahead log.
func Copy(tb testing.TB, key string, build func(ctx context.Context, path string) error) string {
	tb.Helper()
	mu.Lock()
	tpl, ok := templates[key]
	if !ok {
		tpl = &template{}
		templates[key] = tpl
	}
	mu.Unlock()
	tpl.once.Do(func() { tpl.image, tpl.err = buildImage(build) })
	if tpl.err != nil {
		tb.Fatalf("sqlitetest: template %q: %v", key, tpl.err)
	}
	path := filepath.Join(tb.TempDir(), "docket.db")
	if err := os.WriteFile(path, tpl.image, 0o600); err != nil {
		tb.Fatalf("sqlitetest: %v", err)
	}
	return path
}

// Migrated returns the path of a new database with the engine's schema, as
// Driver.Migrate leaves it.
func Migrated(tb testing.TB) string {
	tb.Helper()
	return Copy(tb, "engine", func(ctx context.Context, path string) error {
		d, err := sqlite.Open(ctx, path)
		if err != nil {
			return err
		}
		if err := d.Migrate(ctx); err != nil {
			_ = d.Close()
			return err
		}
		return d.Close()
	})
}

// buildImage runs build in a temporary directory and returns the file it
// made; the directory is removed.
func buildImage(build func(ctx context.Context, path string) error) ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "template.db")
	if err := build(context.Background(), path); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		return nil, fmt.Errorf("%s-wal holds %d bytes after build: close the database before returning", path, st.Size())
	}
	return os.ReadFile(path)
}
