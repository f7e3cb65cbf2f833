package sqlitestore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

// otherTenantChunks is how many chunks tenant "b" holds beside tenant "t"'s
// bulk fill (fillChunks): chunk i of its document "b0" is
// "chunk i word<i%10> of tenant b".
const otherTenantChunks = 30

// fillOtherTenant gives s tenant "b" and its chunks, stored as the store
// stores them.
func fillOtherTenant(tb testing.TB, s *Store) {
	tb.Helper()
	ctx := context.Background()
	if _, err := s.TenantCreate(ctx, &docket.TenantCreateParams{ID: "b", Name: "b", Plan: docket.PlanFree}); err != nil {
		tb.Fatal(err)
	}
	chunks := make([]*docket.Chunk, otherTenantChunks)
	for i := range chunks {
		chunks[i] = &docket.Chunk{Index: i, Text: fmt.Sprintf("chunk %d word%d of tenant b", i, i%10), Model: "m", Dimensions: 0}
	}
	err := s.InTenant(ctx, "b", func(tx docket.Tx) error {
		if err := tx.DocumentInsert(ctx, &docket.Document{ID: "b0", Filename: "b.txt", ContentType: "text/plain", SHA256: "x", BlobKey: "b"}); err != nil {
			return err
		}
		return tx.ChunkReplace(ctx, "b0", chunks)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// otherTenantSearches are tenant "b"'s searches of the tests below, with
// the indexes of the chunks each finds: "chunk" is in every chunk of
// tenant "t", "word7" in one in 1,000.
var otherTenantSearches = []struct {
	phrases []string
	want    []int
}{
	{[]string{"chunk"}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}},
	{[]string{"word7"}, []int{7, 17, 27}},
	{[]string{"chunk", "word7"}, []int{7, 17, 27}},
	{[]string{"7 word7"}, []int{7}},
}

// TestChunkSearch_OtherTenant: a tenant's search reads nothing of another
// tenant's chunks in the full-text index. Each phrase of tenant "b"'s
// query, as the store writes it (what FTS5 iterates for the match, and
// again for each phrase's BM25 weight), yields only "b"'s rows, however
// many chunks "t" holds with the same words; and the search finds what it
// found before.
func TestChunkSearch_OtherTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPlan(t)
	fillChunks(t, s, 20, 1000)
	fillOtherTenant(t, s)
	for _, c := range otherTenantSearches {
		for _, p := range c.phrases {
			if n, other := indexRows(t, s, "b", p); other != 0 {
				t.Errorf("phrase %q of tenant b: the index yields %d rows, %d of another tenant", p, n, other)
			}
		}
		var got []int
		hits, err := s.ChunkSearch(ctx, "b", &docket.ChunkSearchParams{Phrases: c.phrases, Limit: 100, Ranked: 2000})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Chunk.TenantID != "b" || h.Chunk.DocumentID != "b0" {
				t.Fatalf("search %q of tenant b: a hit of %s/%s", c.phrases, h.Chunk.TenantID, h.Chunk.DocumentID)
			}
			got = append(got, h.Chunk.Index)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("search %q of tenant b: chunks %v, want %v", c.phrases, got, c.want)
		}
	}
}

// indexRows returns how many rows the full-text index yields for the
// tenant's phrase as a search writes it, and how many of them are another
// tenant's.
func indexRows(t *testing.T, s *Store, tenant, phrase string) (n, other int) {
	t.Helper()
	match, _ := ftsMatch(tenant, []string{phrase}, false, true)
	err := s.d.DB().QueryRowContext(context.Background(), `SELECT count(*), count(*) FILTER (WHERE c.tenant_id <> ?)
FROM docket_chunks_fts f JOIN docket_chunks c ON c.id = f.rowid WHERE docket_chunks_fts MATCH ?`, tenant, match).Scan(&n, &other)
	if err != nil {
		t.Fatalf("%q: %v", match, err)
	}
	return n, other
}

// BenchmarkChunkSearch_OtherTenant times tenant "b"'s searches (30 chunks)
// beside tenant "t" at 10^5 and 10^6 chunks.
func BenchmarkChunkSearch_OtherTenant(b *testing.B) {
	for _, docs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("other=%d", docs*1000), func(b *testing.B) {
			ctx := context.Background()
			s := openPlan(b)
			fillChunks(b, s, docs, 1000)
			fillOtherTenant(b, s)
			for _, c := range otherTenantSearches {
				b.Run(fmt.Sprintf("%q", c.phrases), func(b *testing.B) {
					p := &docket.ChunkSearchParams{Phrases: c.phrases, Model: "m", Limit: 200, Ranked: 2000}
					for b.Loop() {
						hits, err := s.ChunkSearch(ctx, "b", p)
						if err != nil || len(hits) != len(c.want) {
							b.Fatalf("search %q: %d hits, %v", c.phrases, len(hits), err)
						}
					}
				})
			}
		})
	}
}

// TestTenantTerms: the tenant's prefix goes before each run of word
// characters as the index's tokenizer splits them, and nowhere else.
func TestTenantTerms(t *testing.T) {
	t.Parallel()
	p := tenantPrefix("a")
	if len(p) != tenantPrefixLen || strings.Trim(p, "0123456789") != "" || p == tenantPrefix("b") {
		t.Fatalf("prefix of a %q, of b %q: want %d digits each, apart", p, tenantPrefix("b"), tenantPrefixLen)
	}
	for _, c := range []struct{ text, want string }{
		{"", ""},
		{"Payments, 2026-11!", p + "Payments, " + p + "2026-" + p + "11!"},
		{"x\uE000Achse y\uE000Achse", p + "x\uE000Achse " + p + "y\uE000Achse"},
		{"„Größen“ \uf8edy1y2", "„" + p + "Größen“ \uf8ed" + p + "y1y2"},
		{"  -- ", "  -- "},
	} {
		if got := tenantTerms("a", c.text); got != c.want {
			t.Errorf("tenantTerms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
