package sqlitestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// openFilled returns a fresh, migrated store holding fillChunks(docs, perDoc),
// copied from a database built once per machine and kept in the user's cache
// directory (docket/test-fixtures): filling 10^6 chunks and their full-text
// index costs tens of CPU-seconds, copying the file a fraction of one. The
// cached file is named by a hash of everything it is made of: the migrated
// schema, the fill's statements, the sizes and SQLite's version, so that a
// change to any of them builds a new one (and deletes the old one of the
// same size). Without a
// cache directory the store is filled in place.
func openFilled(t *testing.T, docs, perDoc int) *Store {
	t.Helper()
	s := openPlan(t)
	dir, err := os.UserCacheDir()
	if err != nil {
		fillChunks(t, s, docs, perDoc)
		return s
	}
	dir = filepath.Join(dir, "docket", "test-fixtures")
	key, err := fillKey(s, docs, perDoc)
	if err != nil {
		t.Fatal(err)
	}
	size := fmt.Sprintf("chunks-%dx%d-", docs, perDoc)
	cached := filepath.Join(dir, size+key+".db")
	if _, err := os.Stat(cached); err == nil {
		return openCopy(t, cached)
	}
	fillChunks(t, s, docs, perDoc)
	if err := saveFill(s, dir, size, cached); err != nil {
		t.Logf("fixture not cached: %v", err) // the next run fills again
	}
	return s
}

// fillKey hashes what a filled database is made of.
func fillKey(s *Store, docs, perDoc int) (string, error) {
	var schema, version string
	err := s.d.DB().QueryRow(`SELECT group_concat(sql, ';'), sqlite_version()
FROM (SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type, name)`).Scan(&schema, &version)
	if err != nil {
		return "", fmt.Errorf("fixture key: %w", err)
	}
	h := sha256.New()
	for _, part := range []string{schema, version, fillTenantSQL, fillDocumentsSQL, fillChunksSQL, fillIndexSQL, fmt.Sprint(docs, perDoc)} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// saveFill copies s's database, checkpointed into its main file, to
// cached, through a temporary file renamed into place, and deletes the
// other cached fills of its size (named with the prefix size).
func saveFill(s *Store, dir, size, cached string) error {
	var path string
	if err := s.d.DB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		return err
	}
	if _, err := s.d.DB().ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, size+"*.db"))
	tmp, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := copyInto(tmp, path); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), cached); err != nil {
		return err
	}
	for _, f := range old {
		if f != cached {
			_ = os.Remove(f)
		}
	}
	return nil
}

// openCopy opens a copy of the database file src in a temporary directory
// as a migrated store, closed when the test ends.
func openCopy(t *testing.T, src string) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "filled.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := copyInto(f, src); err != nil {
		t.Fatal(err)
	}
	d, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	s := New(d)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// copyInto copies the file src into dst and closes dst.
func copyInto(dst *os.File, src string) error {
	in, err := os.Open(src)
	if err != nil {
		_ = dst.Close()
		return err
	}
	defer func() { _ = in.Close() }()
	if _, err := io.Copy(dst, in); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

// TestOpenFilled: a store opened from the cached fill holds what fillChunks
// leaves, the second time from the cache.
func TestOpenFilled(t *testing.T) {
	t.Parallel()
	for range 2 {
		s := openFilled(t, 3, 4)
		var n int
		var texts string
		err := s.d.DB().QueryRow(`SELECT count(*), group_concat(text, '|') FROM (SELECT text FROM docket_chunks ORDER BY id)`).Scan(&n, &texts)
		if err != nil || n != 12 || !strings.HasPrefix(texts, "chunk 0 word0|chunk 1 word1|") {
			t.Fatalf("%d chunks %q, %v", n, texts, err)
		}
		var hits int
		if err := s.d.DB().QueryRow(`SELECT count(*) FROM docket_chunks_fts WHERE docket_chunks_fts MATCH ?`, `"`+tenantPrefix("t")+`word7"`).Scan(&hits); err != nil || hits != 1 {
			t.Fatalf("full-text hits %d, %v", hits, err)
		}
	}
}
