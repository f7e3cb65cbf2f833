package pgstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/store/pgstore"
)

// TestChunkSearch_Compound: a hyphenated compound is found as one lexeme
// (migrations/007_search_compounds.sql), stemmed by the chunk's language,
// not as a phrase of its words (which reads every chunk holding both to
// check that they are adjacent); its words written apart are found only
// when no chunk holds the compound.
func TestChunkSearch_Compound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.d.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "a", Name: "a", Plan: docket.PlanFree}); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Eine 0-dimensionale Sphäre ist ein Punktepaar.",
		"Die 0-dimensionalen Räume sind diskret.",
		"Null: 0 und dimensionale Räume getrennt.",
		"Ein Raum 0 dimensionale, ohne Bindestrich.",
		"Ein 1 dimensionale Raum, ohne Bindestrich.",
	}
	chunks := make([]*docket.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = &docket.Chunk{Index: i, Text: text, Vector: []float32{1, 0}, Model: "m", Dimensions: 2, Language: "de"}
	}
	err := f.d.InTenant(f.ctx, "a", func(tx docket.Tx) error {
		if err := tx.DocumentInsert(f.ctx, &docket.Document{ID: "d", Filename: "f.txt", ContentType: "text/plain", SHA256: "x", BlobKey: "b"}); err != nil {
			return err
		}
		return tx.ChunkReplace(f.ctx, "d", chunks)
	})
	if err != nil {
		t.Fatal(err)
	}
	search := func(phrase string) []int {
		t.Helper()
		var got []int
		err := f.d.ReadTenant(f.ctx, "a", func(tx docket.Tx) error {
			hits, err := tx.ChunkSearch(f.ctx, &docket.ChunkSearchParams{Phrases: []string{phrase}, Model: "m", Dimensions: 2, Limit: 10})
			for _, h := range hits {
				got = append(got, h.Chunk.Index)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		return got
	}
	for _, c := range []struct {
		phrase string
		want   []int
	}{
		{"0-dimensionale", []int{0, 1}},  // the compound, inflected too; not 3, its words apart
		{"0-Dimensionalen", []int{0, 1}}, // as typed in another form
		{"1-dimensionale", []int{4}},     // no chunk holds the compound: the words as a phrase
		{"dimensionale", []int{0, 1, 2, 3, 4}},
	} {
		if got := search(c.phrase); !slices.Equal(got, c.want) {
			t.Errorf("search %q: chunks %v, want %v", c.phrase, got, c.want)
		}
	}

	// The query of a compound has no phrase operator: the index answers it
	// without reading a chunk to check positions.
	var query string
	err = f.d.ReadTenant(f.ctx, "a", func(tx docket.Tx) error {
		return tx.Native().(pgx.Tx).QueryRow(f.ctx, pgstore.SearchQuerySQL, "a", []string{"0-dimensionale"}, false, []string{"0-dimensionale"}).Scan(&query)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(query, "<") || !strings.Contains(query, "'0-dimensional'") {
		t.Errorf("query of a compound %q, want its lexemes without a phrase operator", query)
	}
}

// TestChunkStorage: a chunk's tsvector stays in its row, which a search
// reads for every match, and its vector, read only for the best few, goes
// out of line (migrations/007_search_compounds.sql).
func TestChunkStorage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rows, err := f.d.Pool().Query(f.ctx, `SELECT attname || '=' || attstorage::text FROM pg_attribute
WHERE attrelid = 'docket_chunks'::regclass AND attname IN ('tsv', 'vector') ORDER BY attname`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tsv=m", "vector=e"}; !slices.Equal(got, want) {
		t.Errorf("storage %v, want %v", got, want)
	}
}

// TestChunkSearch_WorkMem: the search function runs with a small
// work_mem, without parallel workers and without synchronized scans (its
// SET clauses, migrations/008_search_settings.sql), and leaves the
// settings of the caller's transaction as they were.
func TestChunkSearch_WorkMem(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if got := searchSetting(t, f, "max_parallel_workers_per_gather"); got != "0" {
		t.Errorf("docket_chunk_search: max_parallel_workers_per_gather %q, want 0", got)
	}
	if got := searchSetting(t, f, "synchronize_seqscans"); got != "off" {
		t.Errorf("docket_chunk_search: synchronize_seqscans %q, want off", got)
	}
	if got := searchSetting(t, f, "work_mem"); got != "64kB" {
		t.Errorf("docket_chunk_search: work_mem %q, want 64kB", got)
	}
	if _, err := f.d.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "a", Name: "a", Plan: docket.PlanFree}); err != nil {
		t.Fatal(err)
	}
	const settings = `SELECT current_setting('work_mem') || ' ' || current_setting('max_parallel_workers_per_gather')`
	var before, after string
	err := f.d.ReadTenant(f.ctx, "a", func(tx docket.Tx) error {
		q := tx.Native().(pgx.Tx)
		if err := q.QueryRow(f.ctx, settings).Scan(&before); err != nil {
			return err
		}
		if _, err := tx.ChunkSearch(f.ctx, &docket.ChunkSearchParams{Phrases: []string{"word"}, Limit: 10}); err != nil {
			return err
		}
		return q.QueryRow(f.ctx, settings).Scan(&after)
	})
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("work_mem and parallel workers %q before the search, %q after, want them unchanged", before, after)
	}
}

// searchSetting returns the value docket_chunk_search's SET clause gives
// the setting name ("" when it sets none).
func searchSetting(t *testing.T, f *fixture, name string) string {
	t.Helper()
	var value string
	err := f.d.Pool().QueryRow(f.ctx, `SELECT coalesce(max(split_part(c, '=', 2)), '')
FROM pg_proc p, unnest(p.proconfig) c
WHERE p.oid = 'docket_chunk_search(tsquery, text, int, text, int, int)'::regprocedure AND split_part(c, '=', 1) = $1`, name).Scan(&value)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// TestChunkSearch_LossyBitmap: at the search's work_mem, the bitmap of a word in
// a few thousand pages is lossy (a bit a page, not an entry a page), which
// is what bounds a search's memory and CPU by the rows it reads rather
// than by every chunk, in every tenant, that holds its word.
func TestChunkSearch_LossyBitmap(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.exec(`INSERT INTO docket_tenants (id, name, plan) VALUES ('t', 't', 'free')`)
	f.exec(`INSERT INTO docket_documents (id, tenant_id, filename) VALUES ('d', 't', 'f')`)
	// ~2 KB of hex a chunk, which does not compress: some 3 rows a page.
	f.exec(`INSERT INTO docket_chunks (tenant_id, document_id, idx, text, tsv)
SELECT 't', 'd', g, t, to_tsvector('simple', t)
FROM generate_series(0, 5999) g, LATERAL (SELECT 'common ' || string_agg(md5(g::text || '-' || i), ' ') AS t
    FROM generate_series(1, 60) i) x`)
	f.exec(`ANALYZE docket_chunks`)
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // read only
	plan := func(workMem string) string {
		t.Helper()
		if _, err := tx.Exec(f.ctx, `SELECT set_config('work_mem', $1, true), set_config('enable_seqscan', 'off', true)`, workMem); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(f.ctx, `EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM docket_chunks WHERE tsv @@ 'common'::tsquery`)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	if p := plan("4MB"); strings.Contains(p, "lossy") {
		t.Fatalf("the default work_mem already makes a lossy bitmap; the test needs more pages:\n%s", p)
	}
	if wm := searchSetting(t, f, "work_mem"); !strings.Contains(plan(wm), "lossy") {
		t.Errorf("bitmap at %s is not lossy:\n%s", wm, plan(wm))
	}
}
