package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// TestOpen_CacheSize: reader connections have the writer's page cache
// (32 MB), not SQLite's default of 2 MB, which a search at 10^6 chunks
// outgrew.
func TestOpen_CacheSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var writer, reader int
	if err := d.DB().QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&writer); err != nil {
		t.Fatal(err)
	}
	if err := d.ReadDB().QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&reader); err != nil {
		t.Fatal(err)
	}
	if writer != -32000 || reader != -32000 {
		t.Errorf("cache_size writer %d, reader %d, want -32000 (32 MB) both", writer, reader)
	}
}
