package sqlitestore

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/sqlite"
)

// TestMigrate_SearchTenant: chunks indexed before migration 006 (words
// shared by all tenants) are indexed again by it in their tenants' words:
// each tenant's search finds its own chunks, and the index yields no
// other tenant's rows for it.
func TestMigrate_SearchTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	upTo005 := fstest.MapFS{}
	for _, name := range []string{"001_documents.sql", "002_search.sql", "003_tenant_list.sql", "004_tenant_delete.sql", "005_search_compounds.sql"} {
		body, err := fs.ReadFile(migrationFS, "migrations/"+name)
		if err != nil {
			t.Fatal(err)
		}
		upTo005["migrations/"+name] = &fstest.MapFile{Data: body}
	}
	if err := d.MigrateLine(ctx, sqlite.MigrationLine{Name: docsLine.Name, FS: upTo005, Dir: "migrations"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO docket_tenants (id, name, plan, created_at, updated_at) VALUES ('a', 'a', 'free', 0, 0), ('b', 'b', 'free', 0, 0)`,
		`INSERT INTO docket_documents (id, tenant_id, filename, content_type, size, sha256, blob_key, created_at, updated_at)
VALUES ('da', 'a', 'a.txt', 'text/plain', 0, '', '', 0, 0), ('db', 'b', 'b.txt', 'text/plain', 0, '', '', 0, 0)`,
		`INSERT INTO docket_chunks (document_id, idx, tenant_id, text, compounds) VALUES
('da', 0, 'a', 'Payments of the x-Achse', docket_compounds('Payments of the x-Achse')),
('da', 1, 'a', 'Nothing here', ''),
('db', 0, 'b', 'A payment on the x-Achse', docket_compounds('A payment on the x-Achse'))`,
	} {
		if _, err := d.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := New(d)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tenant, phrase string
		want           []string
	}{
		{"a", "payment", []string{"da/0"}},
		{"b", "payments", []string{"db/0"}},
		{"a", "x-Achse", []string{"da/0"}},
		{"b", "x-Achse", []string{"db/0"}},
		{"a", "nothing", []string{"da/1"}},
		{"b", "nothing", nil},
	} {
		if n, other := indexRows(t, s, c.tenant, c.phrase); other != 0 || n != len(c.want) {
			t.Errorf("phrase %q of tenant %s: the index yields %d rows, %d of another tenant; want %d, none", c.phrase, c.tenant, n, other, len(c.want))
		}
		hits, err := s.ChunkSearch(ctx, c.tenant, &docket.ChunkSearchParams{Phrases: []string{c.phrase}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Chunk.DocumentID+"/"+string(rune('0'+h.Chunk.Index)))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("search %q of tenant %s after the migration: %v, want %v", c.phrase, c.tenant, got, c.want)
		}
	}
}

// Each trigger of the document store is defined once, in its repeatable
// file; no migration creates one.
func TestMigrations_CodeInRepeatableFiles(t *testing.T) {
	t.Parallel()
	if err := docsLine.CheckDefinitions(); err != nil {
		t.Fatal(err)
	}
}
