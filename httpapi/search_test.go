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

func TestSearch(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	b := e.newTenant(t, "globex", 0)
	ctx := context.Background()
	emb := embedding.NewHashing(0)
	texts := []string{"the invoice payment is due in March", "cats and dogs play in the garden",
		"payment of the invoice was received", "quarterly revenue report"}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	docA := e.uploadOK(t, a.key, "a").Document.ID
	docB := e.uploadOK(t, b.key, "b").Document.ID
	put := func(tenantID, docID string, model string) {
		var cs []*docket.Chunk
		for i, text := range texts {
			cs = append(cs, &docket.Chunk{Index: i, Text: text, PageStart: i + 1, PageEnd: i + 1,
				Vector: vecs[i], Model: model, Dimensions: emb.Dimensions()})
		}
		if err := e.driver.InTenant(ctx, tenantID, func(tx docket.Tx) error { return tx.ChunkReplace(ctx, docID, cs) }); err != nil {
			t.Fatal(err)
		}
	}
	put(a.id, docA, emb.Model())
	put(b.id, docB, emb.Model())
	var res struct {
		Results []searchHit `json:"results"`
	}
	e.do(t, http.MethodGet, "/v1/search?k=2&q="+url.QueryEscape("invoice payment"), a.key, nil).want(t, http.StatusOK).decode(t, &res)
	if len(res.Results) != 2 {
		t.Fatalf("results %+v", res.Results)
	}
	for _, h := range res.Results {
		if h.DocumentID != docA || !strings.Contains(h.Text, "invoice") || h.PageStart != h.ChunkIndex+1 {
			t.Errorf("hit %+v", h)
		}
	}
	if res.Results[0].Score < res.Results[1].Score || res.Results[0].Score <= 0 {
		t.Errorf("scores %v, %v", res.Results[0].Score, res.Results[1].Score)
	}
	e.do(t, http.MethodGet, "/v1/search?q=garden", a.key, nil).want(t, http.StatusOK).decode(t, &res)
	if len(res.Results) != 4 || !strings.Contains(res.Results[0].Text, "garden") {
		t.Errorf("default k: %+v", res.Results)
	}
	// Vectors of another model never compare.
	c := e.newTenant(t, "initech", 0)
	put(c.id, e.uploadOK(t, c.key, "c").Document.ID, "other-model")
	e.do(t, http.MethodGet, "/v1/search?q=garden", c.key, nil).want(t, http.StatusOK).decode(t, &res)
	if len(res.Results) != 0 {
		t.Errorf("other model: %+v", res.Results)
	}
	for _, q := range []string{"", "q=", "q=%20", "q=a&k=0", "q=a&k=101", "q=a&k=x", "q=" + strings.Repeat("a", 1001)} {
		e.do(t, http.MethodGet, "/v1/search?"+q, a.key, nil).want(t, http.StatusBadRequest)
	}
}

func TestTopK(t *testing.T) {
	t.Parallel()
	top := newTopK(3)
	for i, s := range []float32{0.1, 0.9, 0.5, 0.9, 0.2, 0.7} {
		top.offer(&docket.Chunk{Index: i}, s)
	}
	var got []int
	for _, h := range top.results() {
		got = append(got, h.ChunkIndex)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 5 {
		t.Errorf("top 3 %v, want [1 3 5]", got)
	}
}
