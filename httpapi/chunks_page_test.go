package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/docketq/docket"
)

// GET /v1/documents/{id}/chunks is paged: ?limit= chunks at most, in
// order, and next_cursor until the last page; a bad cursor is 400.
func TestDocuments_ChunksPaged(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "with chunks")
		ctx := context.Background()
		var cs []*docket.Chunk
		for i := range 5 {
			cs = append(cs, &docket.Chunk{Index: i, Text: "chunk", PageStart: 1, PageEnd: 1, Vector: []float32{1, 0}, Model: "m", Dimensions: 2})
		}
		if err := e.driver.InTenant(ctx, a.id, func(tx docket.Tx) error { return tx.ChunkReplace(ctx, u.Document.ID, cs) }); err != nil {
			t.Fatal(err)
		}
		path := "/v1/documents/" + u.Document.ID + "/chunks?limit=2"
		var got []int
		for pages := 0; ; pages++ {
			var page struct {
				Chunks     []chunkView `json:"chunks"`
				NextCursor *string     `json:"next_cursor"`
			}
			e.do(t, http.MethodGet, path, a.key, nil).want(t, http.StatusOK).decode(t, &page)
			if len(page.Chunks) > 2 || pages > 5 {
				t.Fatalf("page of %d chunks (page %d)", len(page.Chunks), pages)
			}
			for _, c := range page.Chunks {
				got = append(got, c.Index)
			}
			if page.NextCursor == nil {
				break
			}
			path = "/v1/documents/" + u.Document.ID + "/chunks?limit=2&cursor=" + *page.NextCursor
		}
		if len(got) != 5 || got[0] != 0 || got[4] != 4 {
			t.Errorf("chunks read over the pages: %v, want 0-4", got)
		}
		for _, q := range []string{"cursor=x", "cursor=-1", "limit=0"} {
			e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID+"/chunks?"+q, a.key, nil).want(t, http.StatusBadRequest)
		}
	})
}
