package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
)

// Search limits.
const (
	defaultSearchK = 10
	maxSearchK     = 100
	maxQueryChars  = 1000
)

// searchHit is one result of GET /v1/search.
type searchHit struct {
	DocumentID string  `json:"document_id"`
	ChunkIndex int     `json:"chunk_index"`
	Text       string  `json:"text"`
	PageStart  int     `json:"page_start"`
	PageEnd    int     `json:"page_end"`
	Score      float32 `json:"score"`
}

// search serves GET /v1/search?q=&k=: the k chunks of the tenant most
// similar to q by cosine similarity, best first. The query is embedded with
// the pipeline's embedder and only vectors of its model and size compare.
//
// A tenant runs at most SearchesPerTenant searches at once (429 beyond)
// and each gets SearchTimeout (503 after it), so that one tenant's load
// stays its own.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	q, k, err := searchParams(r)
	if err != nil {
		return err
	}
	tenantID := tenantOf(r).ID
	if !s.searches.acquire(tenantID, s.cfg.SearchesPerTenant) {
		return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests", retryAfter: 1,
			detail: fmt.Sprintf("this tenant already runs %d searches; retry when one is done", s.cfg.SearchesPerTenant)}
	}
	defer s.searches.release(tenantID)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.SearchTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	err = s.runSearch(w, r, q, k)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return &httpError{status: http.StatusServiceUnavailable, title: "Service Unavailable", retryAfter: 5,
			detail: fmt.Sprintf("the search took longer than %s", s.cfg.SearchTimeout)}
	}
	return err
}

// runSearch ranks the tenant's chunks against q and writes the k best.
func (s *Server) runSearch(w http.ResponseWriter, r *http.Request, q string, k int) error {
	vecs, err := s.cfg.Embedder.Embed(r.Context(), []string{q})
	if err != nil {
		return err
	}
	if len(vecs) != 1 {
		return embedding.ErrBadResponse
	}
	top := newTopK(k)
	p := &docket.ChunkScanParams{Model: s.cfg.Embedder.Model(), Dimensions: s.cfg.Embedder.Dimensions()}
	err = s.cfg.Store.ReadTenant(r.Context(), tenantOf(r).ID, func(tx docket.Tx) error {
		return tx.ChunkScan(r.Context(), p, func(c *docket.Chunk) error {
			top.offer(c, embedding.Cosine(vecs[0], c.Vector))
			return nil
		})
	})
	if err != nil {
		return err
	}
	out := struct {
		Results []searchHit `json:"results"`
	}{Results: top.results()}
	return writeJSON(w, http.StatusOK, out)
}

func searchParams(r *http.Request) (q string, k int, err error) {
	v := r.URL.Query()
	q = strings.TrimSpace(v.Get("q"))
	if q == "" || utf8.RuneCountInString(q) > maxQueryChars || !utf8.ValidString(q) {
		return "", 0, errorf(http.StatusBadRequest, "q is required: 1-%d characters of UTF-8", maxQueryChars)
	}
	k = defaultSearchK
	if s := v.Get("k"); s != "" {
		if k, err = strconv.Atoi(s); err != nil || k < 1 || k > maxSearchK {
			return "", 0, errorf(http.StatusBadRequest, "k must be 1-%d", maxSearchK)
		}
	}
	return q, k, nil
}

// topK keeps the k best chunks seen, so a search holds k chunks, not the
// tenant's vectors. Ties keep the chunk seen first.
type topK struct {
	k    int
	hits []searchHit // best first
}

func newTopK(k int) *topK { return &topK{k: k, hits: make([]searchHit, 0, k)} }

func (t *topK) offer(c *docket.Chunk, score float32) {
	if score != score { // NaN
		return
	}
	if len(t.hits) == t.k && score <= t.hits[len(t.hits)-1].Score {
		return
	}
	i, _ := slices.BinarySearchFunc(t.hits, score, func(h searchHit, s float32) int {
		if h.Score >= s {
			return -1
		}
		return 1
	})
	h := searchHit{DocumentID: c.DocumentID, ChunkIndex: c.Index, Text: c.Text,
		PageStart: c.PageStart, PageEnd: c.PageEnd, Score: score}
	if len(t.hits) == t.k {
		t.hits = t.hits[:t.k-1]
	}
	t.hits = slices.Insert(t.hits, i, h)
}

func (t *topK) results() []searchHit { return t.hits }

// inflight counts the requests of each tenant running now.
type inflight struct {
	mu sync.Mutex
	n  map[string]int
}

func newInflight() *inflight { return &inflight{n: make(map[string]int)} }

// acquire counts a request of tenantID in, unless it runs limit already.
func (f *inflight) acquire(tenantID string, limit int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[tenantID] >= limit {
		return false
	}
	f.n[tenantID]++
	return true
}

func (f *inflight) release(tenantID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[tenantID]--; f.n[tenantID] <= 0 {
		delete(f.n, tenantID)
	}
}
