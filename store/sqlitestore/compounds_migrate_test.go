package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/sqlitestore"
)

// TestMigrate_Compounds: chunks stored before migration 005 get their
// compounds from it, so that a search for a compound finds them as it
// finds chunks stored since (and not the words apart, as the fallback to a
// phrase would).
func TestMigrate_Compounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docket.db")
	migrateLegacy(t, path, 10) // docs 004: the index without compounds
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO docket_tenants (id, name, plan, created_at, updated_at) VALUES ('a', 'a', 'free', 0, 0)`,
		`INSERT INTO docket_documents (id, tenant_id, filename, content_type, size, sha256, blob_key, created_at, updated_at)
VALUES ('d', 'a', 'f.txt', 'text/plain', 0, '', '', 0, 0)`,
		`INSERT INTO docket_chunks (document_id, idx, tenant_id, text) VALUES
('d', 0, 'a', 'Die x-Achse und die y-Achse.'), ('d', 1, 'a', 'Ohne Bindestrich: x Achse.'), ('d', 2, 'a', 'Nichts.')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	s := sqlitestore.New(d)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var compounds []string
	rows, err := d.DB().QueryContext(ctx, `SELECT compounds FROM docket_chunks ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		compounds = append(compounds, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x\uE000Achse y\uE000Achse", "", ""}; !slices.Equal(compounds, want) {
		t.Errorf("compounds after the migration %q, want %q", compounds, want)
	}
	for _, c := range []struct {
		phrase string
		want   []int
	}{
		{"x-Achse", []int{0}}, // the compound: not 1, its words apart
		{"Achse", []int{0, 1}},
	} {
		var got []int
		err := s.ReadTenant(ctx, "a", func(tx docket.Tx) error {
			hits, err := tx.ChunkSearch(ctx, &docket.ChunkSearchParams{Phrases: []string{c.phrase}, Limit: 10})
			for _, h := range hits {
				got = append(got, h.Chunk.Index)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("search %q after the migration: chunks %v, want %v", c.phrase, got, c.want)
		}
	}
}
