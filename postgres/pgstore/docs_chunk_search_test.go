package pgstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/postgres/pgstore"
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
