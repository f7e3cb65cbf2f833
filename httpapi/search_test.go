package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
)

// putChunks stores texts as the chunks of document docID, chunk i on page
// i+1, with vectors of model.
func (e *tenantEnv) putChunks(t *testing.T, tenantID, docID, model string, texts ...string) {
	t.Helper()
	ctx := context.Background()
	emb := embedding.NewHashing(0)
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*docket.Chunk
	for i, text := range texts {
		cs = append(cs, &docket.Chunk{Index: i, Text: text, PageStart: i + 1, PageEnd: i + 1,
			Vector: vecs[i], Model: model, Dimensions: emb.Dimensions(), Language: "en"})
	}
	if err := e.driver.InTenant(ctx, tenantID, func(tx docket.Tx) error { return tx.ChunkReplace(ctx, docID, cs) }); err != nil {
		t.Fatal(err)
	}
}

func (e *tenantEnv) search(t *testing.T, key, query string) searchResults {
	t.Helper()
	var res searchResults
	e.do(t, http.MethodGet, "/v1/search?"+query, key, nil).want(t, http.StatusOK).decode(t, &res)
	return res
}

func TestSearch(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	b := e.newTenant(t, "globex", 0)
	texts := []string{"the invoice payment is due in March", "cats and dogs play in the garden",
		"payment of the invoice was received", "quarterly revenue report for the CUDA team"}
	up := e.uploadOK(t, a.key, "a")
	docA := up.Document.ID
	e.putChunks(t, a.id, docA, embedding.HashingModel, texts...)
	e.putChunks(t, b.id, e.uploadOK(t, b.key, "b").Document.ID, embedding.HashingModel, texts...)

	res := e.search(t, a.key, "k=2&q="+url.QueryEscape("invoice payments"))
	if len(res.Results) != 2 || res.NextCursor != nil {
		t.Fatalf("results %+v", res)
	}
	for _, h := range res.Results {
		if h.DocumentID != docA || h.Filename != up.Document.Filename || !strings.Contains(h.Text, "invoice") ||
			h.PageStart != h.ChunkIndex+1 || !strings.Contains(h.Snippet, "<mark>invoice</mark>") ||
			!strings.Contains(h.Snippet, "<mark>payment</mark>") {
			t.Errorf("hit %+v", h)
		}
	}
	if res.Results[0].Score < res.Results[1].Score || res.Results[0].Score <= 0 {
		t.Errorf("scores %v, %v", res.Results[0].Score, res.Results[1].Score)
	}
	// Exact words and codes are found; words in no chunk find nothing.
	if res := e.search(t, a.key, "q=cuda"); len(res.Results) != 1 || res.Results[0].ChunkIndex != 3 {
		t.Errorf("cuda: %+v", res.Results)
	}
	for _, q := range []string{"xyzzyplugh", "the xyzzyplugh", "---"} {
		if res := e.search(t, a.key, "q="+url.QueryEscape(q)); len(res.Results) != 0 || res.NextCursor != nil {
			t.Errorf("%q: %+v", q, res)
		}
	}
	// No chunk has every word: those with some.
	if res := e.search(t, a.key, "q="+url.QueryEscape("garden xyzzyplugh")); len(res.Results) != 1 || res.Results[0].ChunkIndex != 1 {
		t.Errorf("garden xyzzyplugh: %+v", res.Results)
	}
	// Vectors of another model do not compare, but their chunks' words are found.
	c := e.newTenant(t, "initech", 0)
	e.putChunks(t, c.id, e.uploadOK(t, c.key, "c").Document.ID, "other-model", texts...)
	if res := e.search(t, c.key, "q=garden"); len(res.Results) != 1 || res.Results[0].Score <= 0 {
		t.Errorf("other model: %+v", res.Results)
	}
	for _, q := range []string{"", "q=", "q=%20", "q=a&k=0", "q=a&k=101", "q=a&k=x", "q=" + strings.Repeat("a", 1001),
		"q=a&cursor=x", "q=a&cursor=" + searchCursor(0), "q=a&cursor=" + searchCursor(-1)} {
		e.do(t, http.MethodGet, "/v1/search?"+q, a.key, nil).want(t, http.StatusBadRequest)
	}
}

// TestSearch_PagesAndDocument: k results a page, next_cursor to the next
// one until none is left; document_id keeps one document's chunks.
func TestSearch_PagesAndDocument(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	d1, d2 := e.uploadOK(t, a.key, "one").Document.ID, e.uploadOK(t, a.key, "two").Document.ID
	var texts []string
	for range 7 {
		texts = append(texts, "the harbour survey")
	}
	e.putChunks(t, a.id, d1, embedding.HashingModel, texts...)
	e.putChunks(t, a.id, d2, embedding.HashingModel, texts[:3]...)
	seen := map[string]bool{}
	query, pages := "k=4&q=harbour", 0
	for {
		res := e.search(t, a.key, query)
		pages++
		for _, h := range res.Results {
			key := h.DocumentID + "/" + string(rune('0'+h.ChunkIndex))
			if seen[key] {
				t.Errorf("page %d repeats %s", pages, key)
			}
			seen[key] = true
		}
		if res.NextCursor == nil {
			break
		}
		query = "k=4&q=harbour&cursor=" + *res.NextCursor
	}
	if pages != 3 || len(seen) != 10 {
		t.Errorf("%d pages, %d distinct results; want 3 pages of 10", pages, len(seen))
	}
	res := e.search(t, a.key, "q=harbour&document_id="+d2)
	if len(res.Results) != 3 {
		t.Errorf("document_id: %d results, want 3", len(res.Results))
	}
	for _, h := range res.Results {
		if h.DocumentID != d2 {
			t.Errorf("document_id: hit of %s", h.DocumentID)
		}
	}
}
