package search_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/search"
)

// readCounter is a store that counts its ReadTenant transactions.
type readCounter struct {
	docket.Store
	reads atomic.Int64
}

func (r *readCounter) ReadTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	r.reads.Add(1)
	return r.Store.ReadTenant(ctx, tenantID, fn)
}

// tenantStore is readCounter with the store's own tenant search, as
// both stores have it.
type tenantStore struct {
	*readCounter
	search func(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error)
}

func (t *tenantStore) ChunkSearch(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	return t.search(ctx, tenantID, p)
}

// TestSearch_Tenants: on both stores a search finds its tenant's chunks
// and never another tenant's that hold the same words, whether the
// phrases are found together, one by one (the second search of Any) or
// as a compound; a tenant without chunks finds nothing. Both stores
// search through their own Store.ChunkSearch, outside a ReadTenant
// transaction (on PostgreSQL one round trip a search instead of four);
// the search through ReadTenant, for a store without it, finds the same.
func TestSearch_Tenants(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := st.open(t)
			emb := embedding.NewHashing(0)
			texts := []string{"The lighthouse keeper wrote a whip-poor-will song.", "A keeper of bees and a lighthouse.", "Nothing here at all."}
			for _, tn := range []string{"ta", "tb", "tc"} {
				if _, err := s.TenantCreate(ctx, &docket.TenantCreateParams{ID: tn, Name: tn, Plan: docket.PlanFree}); err != nil {
					t.Fatal(err)
				}
			}
			for _, tn := range []string{"ta", "tb"} {
				putDoc(t, s, emb, tn, "doc-"+tn, texts)
			}
			counter := &readCounter{Store: s}
			ts, ok := s.(interface {
				ChunkSearch(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error)
			})
			if !ok {
				t.Fatalf("%T has no Store.ChunkSearch", s)
			}
			for _, c := range []struct {
				name  string
				store docket.Store
				reads int64
			}{
				{"Store.ChunkSearch", &tenantStore{readCounter: counter, search: ts.ChunkSearch}, 0},
				{"ReadTenant", counter, 1},
			} {
				for _, q := range []struct {
					query string
					want  int
				}{
					{"lighthouse keeper", 2},   // all phrases in both chunks
					{"bees whip-poor-will", 2}, // in no chunk together: any of them
					{"whip-poor-will", 1},      // a compound
					{"xyzzyplugh", 0},
				} {
					for _, tn := range []string{"ta", "tb", "tc"} {
						before := counter.reads.Load()
						page, err := (&search.Searcher{Store: c.store, Embedder: emb}).Search(ctx, &search.Params{TenantID: tn, Query: q.query, K: 10})
						if err != nil {
							t.Fatalf("%s: search %q in %s: %v", c.name, q.query, tn, err)
						}
						if got := counter.reads.Load() - before; got != c.reads {
							t.Errorf("%s: search %q in %s: %d ReadTenant transactions, want %d", c.name, q.query, tn, got, c.reads)
						}
						want := q.want
						if tn == "tc" {
							want = 0
						}
						if len(page.Results) != want {
							t.Errorf("%s: search %q in %s: %d results, want %d", c.name, q.query, tn, len(page.Results), want)
						}
						for _, r := range page.Results {
							if r.Chunk.TenantID != tn || r.Chunk.DocumentID != "doc-"+tn {
								t.Errorf("%s: search %q in %s found a chunk of tenant %s, document %s",
									c.name, q.query, tn, r.Chunk.TenantID, r.Chunk.DocumentID)
							}
						}
					}
				}
			}
			if _, err := ts.ChunkSearch(ctx, "", &docket.ChunkSearchParams{Phrases: []string{"keeper"}, Limit: 10}); err == nil {
				t.Error("Store.ChunkSearch without a tenant: no error")
			}
		})
	}
}

// putDoc stores a document of tenant with a chunk of each text.
func putDoc(t *testing.T, s docket.Store, emb embedding.Embedder, tenant, id string, texts []string) {
	t.Helper()
	ctx := context.Background()
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]*docket.Chunk, len(texts))
	for i, text := range texts {
		cs[i] = &docket.Chunk{Index: i, Text: text, Vector: vecs[i], Model: emb.Model(), Dimensions: emb.Dimensions(), Language: "en"}
	}
	err = s.InTenant(ctx, tenant, func(tx docket.Tx) error {
		doc := &docket.Document{ID: id, Filename: fmt.Sprintf("%s.txt", id), ContentType: "text/plain", SHA256: "x", BlobKey: "b/" + id}
		if err := tx.DocumentInsert(ctx, doc); err != nil {
			return err
		}
		return tx.ChunkReplace(ctx, id, cs)
	})
	if err != nil {
		t.Fatal(err)
	}
}
