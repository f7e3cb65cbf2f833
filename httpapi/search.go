package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/docketq/docket/search"
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
	Filename   string  `json:"filename"`
	ChunkIndex int     `json:"chunk_index"`
	PageStart  int     `json:"page_start"`
	PageEnd    int     `json:"page_end"`
	Text       string  `json:"text"`
	Snippet    string  `json:"snippet"`
	Score      float64 `json:"score"`
}

// searchResults is the answer of GET /v1/search.
type searchResults struct {
	Results    []searchHit `json:"results"`
	NextCursor *string     `json:"next_cursor"`
}

// search serves GET /v1/search?q=&k=&document_id=&cursor=: the tenant's
// chunks that contain the words of q, best first by hybrid retrieval
// (package search), k to a page; next_cursor, when not null, reads the
// next page. A query none of whose words is in any chunk finds nothing.
//
// A tenant runs at most SearchesPerTenant searches at once (429 beyond)
// and each gets SearchTimeout (503 after it), so that one tenant's load
// stays its own.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	p, err := searchParams(r)
	if err != nil {
		return err
	}
	p.TenantID = tenantOf(r).ID
	if !s.searches.acquire(p.TenantID, s.cfg.SearchesPerTenant) {
		return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests", retryAfter: 1,
			detail: fmt.Sprintf("this tenant already runs %d searches; retry when one is done", s.cfg.SearchesPerTenant)}
	}
	defer s.searches.release(p.TenantID)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.SearchTimeout)
	defer cancel()
	err = s.runSearch(ctx, w, p)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return &httpError{status: http.StatusServiceUnavailable, title: "Service Unavailable", retryAfter: 5,
			detail: fmt.Sprintf("the search took longer than %s", s.cfg.SearchTimeout)}
	}
	return err
}

// runSearch runs the search and writes its page.
func (s *Server) runSearch(ctx context.Context, w http.ResponseWriter, p *search.Params) error {
	searcher := &search.Searcher{Store: s.cfg.Store, Embedder: s.cfg.Embedder}
	page, err := searcher.Search(ctx, p)
	if err != nil {
		return err
	}
	out := searchResults{Results: make([]searchHit, len(page.Results))}
	for i, res := range page.Results {
		c := res.Chunk
		out.Results[i] = searchHit{DocumentID: c.DocumentID, Filename: res.Filename, ChunkIndex: c.Index,
			PageStart: c.PageStart, PageEnd: c.PageEnd, Text: c.Text, Snippet: res.Snippet, Score: res.Score}
	}
	if page.Next > 0 {
		next := searchCursor(page.Next)
		out.NextCursor = &next
	}
	return writeJSON(w, http.StatusOK, out)
}

func searchParams(r *http.Request) (*search.Params, error) {
	v := r.URL.Query()
	q := strings.TrimSpace(v.Get("q"))
	if q == "" || utf8.RuneCountInString(q) > maxQueryChars || !utf8.ValidString(q) {
		return nil, errorf(http.StatusBadRequest, "q is required: 1-%d characters of UTF-8", maxQueryChars)
	}
	p := &search.Params{Query: q, K: defaultSearchK, DocumentID: v.Get("document_id")}
	if s := v.Get("k"); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 || k > maxSearchK {
			return nil, errorf(http.StatusBadRequest, "k must be 1-%d", maxSearchK)
		}
		p.K = k
	}
	if c := v.Get("cursor"); c != "" {
		off, ok := searchOffset(c)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "invalid cursor")
		}
		p.Offset = off
	}
	return p, nil
}

// searchCursor is the cursor of the page at offset: opaque to clients.
func searchCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(offset)))
}

// searchOffset reverses searchCursor.
func searchOffset(cursor string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 2 || b[0] != 'o' {
		return 0, false
	}
	off, err := strconv.Atoi(string(b[1:]))
	return off, err == nil && off > 0 && off < search.Candidates
}

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
