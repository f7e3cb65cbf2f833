package sqlitestore

import (
	"context"
	"slices"
	"testing"

	"github.com/docketq/docket"
)

// TestChunkSearch_Compound: a hyphenated compound is a token of its own in
// the index's compounds column (migrations/005_search_compounds.sql), and
// a search for it looks up that token, not the phrase of its words (which
// reads the positions of every chunk holding both); its words written
// apart are found only when no chunk holds the compound.
func TestChunkSearch_Compound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPlan(t)
	if _, err := s.TenantCreate(ctx, &docket.TenantCreateParams{ID: "a", Name: "a", Plan: docket.PlanFree}); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Eine 0-dimensionale Sphäre ist ein Punktepaar.",
		"Die 0-dimensionalen Räume sind diskret.",
		"Null: 0 und dimensionale Räume getrennt.",
		"Ein Raum 0 dimensionale, ohne Bindestrich.",
		"Ein 1 dimensionale Raum, ohne Bindestrich.",
		"The Whip-poor-will sang; whip-poor-wills answered.",
	}
	chunks := make([]*docket.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = &docket.Chunk{Index: i, Text: text, Vector: []float32{1, 0}, Model: "m", Dimensions: 2}
	}
	err := s.InTenant(ctx, "a", func(tx docket.Tx) error {
		if err := tx.DocumentInsert(ctx, &docket.Document{ID: "d", Filename: "f.txt", ContentType: "text/plain", SHA256: "x", BlobKey: "b"}); err != nil {
			return err
		}
		return tx.ChunkReplace(ctx, "d", chunks)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		phrase string
		want   []int
	}{
		{"0-dimensionale", []int{0}}, // the compound; not 3, its words apart
		{"0-Dimensionale", []int{0}},
		{"1-dimensionale", []int{4}}, // no chunk holds the compound: the words as a phrase
		{"dimensionale", []int{0, 2, 3, 4}},
		{"whip-poor-will", []int{5}},
		{"Whip-poor-wills", []int{5}}, // folded and stemmed as one word
	} {
		if got := searchChunks(t, s, "a", c.phrase); !slices.Equal(got, c.want) {
			t.Errorf("search %q: chunks %v, want %v", c.phrase, got, c.want)
		}
	}

	// The query of a compound is one token of the compounds column, no
	// phrase of its words.
	a := tenantPrefix("a")
	if got, compound := ftsMatch("a", []string{"x-Achse"}, false, true); got != "compounds : \""+a+"x\uE000Achse\"" || !compound {
		t.Errorf("query of a compound %q (%t), want its token in the compounds column", got, compound)
	}
	if got, compound := ftsMatch("a", []string{"x-Achse", "Ebene"}, true, false); got != `"`+a+`x-`+a+`Achse" OR "`+a+`Ebene"` || compound {
		t.Errorf("query without compounds %q (%t), want the phrases", got, compound)
	}

	// The index holds each compound as one token of the tenant's, stemmed
	// as one word.
	if _, err := s.d.DB().ExecContext(ctx, `CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, docket_chunks_fts, col)`); err != nil {
		t.Fatal(err)
	}
	var terms []string
	rows, err := s.d.DB().QueryContext(ctx, `SELECT term FROM temp.vocab WHERE col = 'compounds' ORDER BY term`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		if err := rows.Scan(&term); err != nil {
			t.Fatal(err)
		}
		terms = append(terms, term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{a + "0\uE000dimensional", a + "0\uE000dimensionalen", a + "whip\uE000poor\uE000wil"}; !slices.Equal(terms, want) {
		t.Errorf("tokens of the compounds column %q, want %q", terms, want)
	}
}

// searchChunks returns the indexes of the chunks a search of one phrase
// finds in the tenant's document, sorted.
func searchChunks(t *testing.T, s *Store, tenant, phrase string) []int {
	t.Helper()
	ctx := context.Background()
	var got []int
	err := s.ReadTenant(ctx, tenant, func(tx docket.Tx) error {
		hits, err := tx.ChunkSearch(ctx, &docket.ChunkSearchParams{Phrases: []string{phrase}, Model: "m", Dimensions: 2, Limit: 10})
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

// TestCompoundList: the compounds of a text as the index stores them, and
// when a phrase is one.
func TestCompoundList(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text      string
		compounds string
		phrase    string // compoundPhrase of the text
	}{
		{"die x-Achse, die y-Achse", "x\uE000Achse y\uE000Achse", ""},
		{"(x-Achse)", "x\uE000Achse", "x\uE000Achse"},
		{"whip-poor-will", "whip\uE000poor\uE000will", "whip\uE000poor\uE000will"},
		{"2026-11-25", "2026\uE00011\uE00025", "2026\uE00011\uE00025"},
		{"a--b -c d- e", "", ""},
		{"x-Achse x-Achse", "x\uE000Achse x\uE000Achse", ""}, // each occurrence
		{"x-Achse's", "x\uE000Achse", ""},
		{"Größen-Ordnung", "Größen\uE000Ordnung", "Größen\uE000Ordnung"},
		{"Ebene", "", ""},
	} {
		if got := chunkCompounds(c.text); got != c.compounds {
			t.Errorf("chunkCompounds(%q) = %q, want %q", c.text, got, c.compounds)
		}
		if got := compoundPhrase(c.text); got != c.phrase {
			t.Errorf("compoundPhrase(%q) = %q, want %q", c.text, got, c.phrase)
		}
	}
}
