package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// TestDocuments_Retry: a failed document gets a new job linked to the
// failed one, which stays as it was.
func TestDocuments_Retry(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "will fail")
		path := "/v1/documents/" + u.Document.ID + "/retry"
		e.do(t, http.MethodPost, path, a.key, nil).want(t, http.StatusConflict) // pending
		j := e.claim(t)
		e.finish(t, j, queue.OutcomeFailed)
		r := e.do(t, http.MethodPost, path, a.key, nil).want(t, http.StatusAccepted)
		var res struct {
			Job JobView `json:"job"`
		}
		r.decode(t, &res)
		if res.Job.RetryOf == nil || *res.Job.RetryOf != u.Job.ID || res.Job.ID == u.Job.ID ||
			res.Job.Status != "pending" || res.Job.QueuePosition == nil || res.Job.DocumentID != u.Document.ID {
			t.Errorf("retry job %+v", res.Job)
		}
		if r.header.Get("Location") != "/v1/jobs/"+res.Job.ID {
			t.Errorf("Location %q", r.header.Get("Location"))
		}
		var orig JobView
		e.do(t, http.MethodGet, "/v1/jobs/"+u.Job.ID, a.key, nil).want(t, http.StatusOK).decode(t, &orig)
		if orig.Status != "failed" || orig.ErrorMessage == nil || *orig.ErrorMessage != "test failure" {
			t.Errorf("original job %+v", orig)
		}
		var d DocumentView
		e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		if d.JobID != res.Job.ID || d.Status != "pending" {
			t.Errorf("document %+v", d)
		}
		e.do(t, http.MethodPost, path, a.key, nil).want(t, http.StatusConflict) // pending again
	})
}

// TestDocuments_Error: a failed document carries its job's error; while
// an automatic retry runs, neither the document nor the job shows the
// previous attempt's error.
func TestDocuments_Error(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "will fail twice")
		docPath, jobPath := "/v1/documents/"+u.Document.ID, "/v1/jobs/"+u.Job.ID
		var d DocumentView
		var j JobView
		e.do(t, http.MethodGet, docPath, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		if d.Error != nil {
			t.Errorf("pending document: error %q, want null", *d.Error)
		}
		e.finish(t, e.claim(t), queue.OutcomeRetry)
		e.claim(t) // the second attempt runs
		e.do(t, http.MethodGet, docPath, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		e.do(t, http.MethodGet, jobPath, a.key, nil).want(t, http.StatusOK).decode(t, &j)
		if d.Status != "processing" || d.Error != nil || j.Status != "processing" || j.ErrorMessage != nil {
			t.Errorf("second attempt running: document %s (error %v), job %s (error %v); want processing with no error",
				d.Status, d.Error, j.Status, j.ErrorMessage)
		}
	})
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "will fail")
		e.finish(t, e.claim(t), queue.OutcomeFailed)
		r := e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK)
		var d DocumentView
		r.decode(t, &d)
		if d.Status != "failed" || d.Error == nil || *d.Error != "test failure" {
			t.Errorf("failed document: status %s, error %v; want failed with %q", d.Status, d.Error, "test failure")
		}
		var list documentList
		e.do(t, http.MethodGet, "/v1/documents?status=failed", a.key, nil).want(t, http.StatusOK).decode(t, &list)
		if len(list.Documents) != 1 || list.Documents[0].Error == nil || *list.Documents[0].Error != "test failure" {
			t.Errorf("listed failed documents: %+v", list.Documents)
		}
	})
}

// TestDocuments_RetryCancelled: a tenant can retry a cancelled document,
// as the CLI and the admin API can.
func TestDocuments_RetryCancelled(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "cancel me")
		e.do(t, http.MethodPost, "/v1/jobs/"+u.Job.ID+"/cancel", a.key, nil).want(t, http.StatusOK)
		r := e.do(t, http.MethodPost, "/v1/documents/"+u.Document.ID+"/retry", a.key, nil).want(t, http.StatusAccepted)
		var res struct {
			Job JobView `json:"job"`
		}
		r.decode(t, &res)
		if res.Job.RetryOf == nil || *res.Job.RetryOf != u.Job.ID || res.Job.Status != "pending" {
			t.Errorf("retry of a cancelled document: job %+v", res.Job)
		}
		var d DocumentView
		e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		if d.JobID != res.Job.ID || d.Status != "pending" {
			t.Errorf("document after the retry: %+v", d)
		}
	})
}

func TestDocuments_ListAndFilter(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	var ids []string
	for i := range 5 {
		ids = append(ids, e.uploadOK(t, a.key, fmt.Sprint("doc ", i)).Document.ID)
	}
	e.finish(t, e.claim(t), queue.OutcomeFailed) // the oldest fails
	type page struct {
		Documents  []DocumentView `json:"documents"`
		NextCursor *string        `json:"next_cursor"`
	}
	var seen []string
	cursor := ""
	for range 10 {
		var p page
		e.do(t, http.MethodGet, "/v1/documents?limit=2"+cursor, a.key, nil).want(t, http.StatusOK).decode(t, &p)
		for _, d := range p.Documents {
			seen = append(seen, d.ID)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.NextCursor
	}
	if fmt.Sprint(seen) != fmt.Sprint([]string{ids[4], ids[3], ids[2], ids[1], ids[0]}) {
		t.Errorf("pages %v, want newest first %v", seen, ids)
	}
	var failed page
	e.do(t, http.MethodGet, "/v1/documents?status=failed", a.key, nil).want(t, http.StatusOK).decode(t, &failed)
	if len(failed.Documents) != 1 || failed.Documents[0].ID != ids[0] || failed.NextCursor != nil {
		t.Errorf("failed documents %+v", failed)
	}
	for _, q := range []string{"status=bogus", "limit=-1", "cursor=00000000-0000-0000-0000-000000000000"} {
		e.do(t, http.MethodGet, "/v1/documents?"+q, a.key, nil).want(t, http.StatusBadRequest)
	}
}

func TestDocuments_DeleteAndChunks(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	u := e.uploadOK(t, a.key, "with chunks")
	ctx := context.Background()
	err := e.driver.InTenant(ctx, a.id, func(tx docket.Tx) error {
		return tx.ChunkReplace(ctx, u.Document.ID, []*docket.Chunk{
			{Index: 0, Text: "first", PageStart: 1, PageEnd: 1, Vector: []float32{1, 0}, Model: "m", Dimensions: 2},
			{Index: 1, Text: "second", PageStart: 1, PageEnd: 2, Vector: []float32{0, 1}, Model: "m", Dimensions: 2},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var cs struct {
		Chunks []chunkView `json:"chunks"`
	}
	e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID+"/chunks", a.key, nil).want(t, http.StatusOK).decode(t, &cs)
	if fmt.Sprint(cs.Chunks) != "[{0 first 1 1} {1 second 1 2}]" {
		t.Errorf("chunks %v", cs.Chunks)
	}
	blobs := e.blobCount(t)
	e.do(t, http.MethodDelete, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusNoContent)
	if e.blobCount(t) != blobs-1 {
		t.Errorf("blob not deleted")
	}
	e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusNotFound)
	e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID+"/chunks", a.key, nil).want(t, http.StatusNotFound)
	e.do(t, http.MethodDelete, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusNotFound)
	var j JobView
	e.do(t, http.MethodGet, "/v1/jobs/"+u.Job.ID, a.key, nil).want(t, http.StatusOK).decode(t, &j)
	if j.Status != "cancelled" {
		t.Errorf("the deleted document's pending job is %s, want cancelled", j.Status)
	}
}

// staleDocTx shows every document as failed, as a read that raced with a
// retry would have seen it.
type staleDocTx struct{ docket.Tx }

func (tx staleDocTx) DocumentGet(ctx context.Context, id string) (*docket.Document, error) {
	d, err := tx.Tx.DocumentGet(ctx, id)
	if d != nil {
		d.Status = docket.StatusFailed
	}
	return d, err
}

// TestDocuments_RetryRefusedByQueue: when the queue refuses the retry, the
// error names the job once, not once per layer.
func TestDocuments_RetryRefusedByQueue(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	u := e.uploadOK(t, a.key, "still pending")
	tn, err := e.store.TenantGet(context.Background(), a.id)
	if err != nil {
		t.Fatal(err)
	}
	err = e.store.InTenant(context.Background(), a.id, func(tx docket.Tx) error {
		_, err := e.srv.retryTx(context.Background(), staleDocTx{tx}, tn, u.Document.ID)
		return err
	})
	prefix := "retry job " + u.Job.ID + ": "
	if err == nil || strings.Count(err.Error(), prefix) != 1 {
		t.Errorf("retry of a pending job: %v, want %q once", err, prefix)
	}
}
