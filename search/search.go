// Package search finds a tenant's chunks for what a user typed: hybrid
// retrieval that fuses the store's lexical index with vector similarity.
//
// A query is split into phrases ([Phrases]). The store's full-text index
// (docket.Tx.ChunkSearch: FTS5 on SQLite, a GIN-indexed tsvector on
// PostgreSQL) returns up to [Candidates] chunks that contain all of them, or,
// when none does, any of them, ranked by BM25 or ts_rank. Only these
// candidates are compared with the query's vector, and the two rankings
// are fused by reciprocal rank ([Fuse]). Exact words, names and codes are
// found because a chunk must contain them; an embedding of meaning reorders
// what they found. A query whose words appear nowhere finds nothing: that
// is the relevance floor.
package search

import (
	"context"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
)

// Candidates is how many chunks the lexical index hands to the fusion; the
// results of a query, all pages together, are at most this many.
const Candidates = 200

// Ranked caps the matches the lexical index ranks for one search
// (docket.ChunkSearchParams.Ranked): words in more chunks than this are
// ranked among the most recently stored of them, so that a common word
// costs what a rare one does.
const Ranked = 2000

// Searcher runs searches.
type Searcher struct {
	// Store holds the chunks and their index.
	Store docket.Store
	// Embedder embeds the query; only chunk vectors of its model and size
	// take part.
	Embedder embedding.Embedder
}

// Params is one search.
type Params struct {
	TenantID string
	Query    string // as typed
	// DocumentID, when set, searches only that document.
	DocumentID string
	// Offset skips the best results (a page's cursor); K is the page size.
	Offset, K int
}

// Result is a chunk found.
type Result struct {
	Chunk    *docket.Chunk
	Filename string
	// Score fuses the chunk's lexical and vector ranks (Fuse); higher is
	// better, comparable only within one search.
	Score float64
	// Snippet is the passage around the match, HTML with <mark> (Snippet).
	Snippet string
}

// Page is a page of results, best first.
type Page struct {
	Results []Result
	// Next is the Offset of the next page, 0 when this is the last.
	Next int
}

// Search returns the page of p's results. The query is embedded while
// the index is searched.
func (s *Searcher) Search(ctx context.Context, p *Params) (*Page, error) {
	phrases := Phrases(p.Query)
	if len(phrases) == 0 || p.K < 1 || p.Offset >= Candidates {
		return &Page{}, nil
	}
	type embedded struct {
		vec []float32
		err error
	}
	query := make(chan embedded, 1)
	go func() {
		vec, err := s.embed(ctx, p.Query)
		query <- embedded{vec, err}
	}()
	hits, err := s.candidates(ctx, p, phrases)
	q := <-query
	if err != nil {
		return nil, err
	}
	if q.err != nil {
		return nil, q.err
	}
	page := &Page{}
	if len(hits) <= p.Offset {
		return page, nil
	}
	fused := Fuse(hits, q.vec)
	end := min(len(fused), p.Offset+p.K)
	for _, r := range fused[p.Offset:end] {
		r.Snippet = Snippet(r.Chunk.Text, phrases)
		page.Results = append(page.Results, r)
	}
	if end < len(fused) {
		page.Next = end
	}
	return page, nil
}

// tenantSearcher is a store that searches a tenant's chunks without a
// transaction of the caller's, in fewer round trips than ReadTenant and
// its transaction's ChunkSearch (both stores' Store.ChunkSearch; on
// PostgreSQL one round trip a search instead of four).
type tenantSearcher interface {
	ChunkSearch(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error)
}

// candidates returns the chunks that contain every phrase or, when none
// does, any of them; best first.
func (s *Searcher) candidates(ctx context.Context, p *Params, phrases []string) ([]*docket.SearchHit, error) {
	cp := &docket.ChunkSearchParams{Phrases: phrases, DocumentID: p.DocumentID,
		Model: s.Embedder.Model(), Dimensions: s.Embedder.Dimensions(), Limit: Candidates, Ranked: Ranked}
	type chunkSearch func(*docket.ChunkSearchParams) ([]*docket.SearchHit, error)
	var hits []*docket.SearchHit
	find := func(search chunkSearch) (err error) {
		if hits, err = search(cp); err != nil || len(hits) > 0 || len(phrases) == 1 {
			return err
		}
		cp.Any = true
		hits, err = search(cp)
		return err
	}
	var err error
	if ts, ok := s.Store.(tenantSearcher); ok {
		err = find(func(cp *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
			return ts.ChunkSearch(ctx, p.TenantID, cp)
		})
	} else {
		err = s.Store.ReadTenant(ctx, p.TenantID, func(tx docket.Tx) error {
			return find(func(cp *docket.ChunkSearchParams) ([]*docket.SearchHit, error) { return tx.ChunkSearch(ctx, cp) })
		})
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// embed returns the query's vector.
func (s *Searcher) embed(ctx context.Context, q string) ([]float32, error) {
	vecs, err := s.Embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("search: embed the query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("search: embed the query: %w", embedding.ErrBadResponse)
	}
	return vecs[0], nil
}
