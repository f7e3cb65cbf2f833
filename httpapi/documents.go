package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// documentList is the body of GET /v1/documents.
type documentList struct {
	Documents  []DocumentView `json:"documents"`
	NextCursor *string        `json:"next_cursor"`
}

// listDocuments serves GET /v1/documents?status=&limit=&cursor=, newest
// first.
func (s *Server) listDocuments(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	q := r.URL.Query()
	status, err := statusParam(q.Get("status"))
	if err != nil {
		return err
	}
	limit, err := limitParam(q.Get("limit"))
	if err != nil {
		return err
	}
	cursor := q.Get("cursor")
	var docs []*docket.Document
	err = s.cfg.Store.ReadTenant(r.Context(), t.ID, func(tx docket.Tx) error {
		var err error
		docs, err = tx.DocumentList(r.Context(), &docket.DocumentListParams{Status: status, Before: cursor, Limit: limit + 1})
		return err
	})
	if cursor != "" && errors.Is(err, docket.ErrNotFound) {
		return errorf(http.StatusBadRequest, "invalid cursor")
	}
	if err != nil {
		return err
	}
	out := documentList{Documents: make([]DocumentView, 0, min(len(docs), limit))}
	if len(docs) > limit {
		docs = docs[:limit]
		out.NextCursor = &docs[limit-1].ID
	}
	for _, d := range docs {
		out.Documents = append(out.Documents, documentView(d))
	}
	return writeJSON(w, http.StatusOK, out)
}

// getDocument serves GET /v1/documents/{id}.
func (s *Server) getDocument(w http.ResponseWriter, r *http.Request) error {
	d, err := s.tenantDocument(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, documentView(d))
}

// tenantDocument reads the document named by the path's id.
func (s *Server) tenantDocument(r *http.Request) (*docket.Document, error) {
	id, err := documentID(r)
	if err != nil {
		return nil, err
	}
	var d *docket.Document
	err = s.cfg.Store.ReadTenant(r.Context(), tenantOf(r).ID, func(tx docket.Tx) error {
		d, err = tx.DocumentGet(r.Context(), id)
		return err
	})
	return d, err
}

// deleteDocument serves DELETE /v1/documents/{id}: its job is cancelled
// when it has not finished, the document and its chunks are deleted, then
// its blob. 204.
func (s *Server) deleteDocument(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	d, err := s.tenantDocument(r)
	if err != nil {
		return err
	}
	if d.Status == docket.StatusPending || d.Status == docket.StatusProcessing {
		_, err := s.cfg.Queue.Cancel(r.Context(), d.JobID, t.ID)
		if err != nil && !errors.Is(err, docket.ErrConflict) && !errors.Is(err, docket.ErrNotFound) {
			return fmt.Errorf("cancel job of document: %w", err)
		}
	}
	err = s.cfg.Store.InTenant(r.Context(), t.ID, func(tx docket.Tx) error {
		d, err = tx.DocumentDelete(r.Context(), d.ID)
		return err
	})
	if err != nil {
		return err
	}
	if err := s.cfg.Blobs.Delete(context.WithoutCancel(r.Context()), d.BlobKey); err != nil {
		return fmt.Errorf("delete blob of document: %w", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// retryResponse is the body of a 202 to POST /v1/documents/{id}/retry.
type retryResponse struct {
	Job JobView `json:"job"`
}

// retryDocument serves POST /v1/documents/{id}/retry: a new job for a
// failed or cancelled document (409 otherwise), linked to the old one,
// which stays. It processes the document again, so it takes a slot of the
// tenant's upload window as an upload does (429 when none is left).
// The slot, the new job and the document's link to it commit together.
func (s *Server) retryDocument(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	id, err := documentID(r)
	if err != nil {
		return err
	}
	var job *queue.Job
	err = s.cfg.Store.InTenant(r.Context(), t.ID, func(tx docket.Tx) error {
		job, err = s.retryTx(r.Context(), tx, t, id)
		return err
	})
	if err != nil {
		return err
	}
	s.cfg.Queue.PublishInserted(job)
	v, err := s.jobStatusView(r.Context(), job)
	if err != nil {
		return err
	}
	w.Header().Set("Location", fmt.Sprintf("/v1/jobs/%d", job.ID))
	return writeJSON(w, http.StatusAccepted, retryResponse{Job: v})
}

func (s *Server) retryTx(ctx context.Context, tx docket.Tx, t *docket.Tenant, id string) (*queue.Job, error) {
	d, err := tx.DocumentGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.Status != docket.StatusFailed && d.Status != docket.StatusCancelled {
		return nil, errorf(http.StatusConflict, "document %s is %s; only a failed or cancelled document can be retried", id, d.Status)
	}
	rl, err := tx.RateLimitTake(ctx, rateParams(t))
	if err != nil {
		return nil, err
	}
	if !rl.Allowed {
		return nil, rateLimited(rl)
	}
	job, err := s.cfg.Queue.RetryTx(ctx, tx.Native(), d.JobID, tx.TenantID())
	if err != nil {
		return nil, err // the driver's error names the job already
	}
	if _, err := tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: id, JobID: &job.ID}); err != nil {
		return nil, err
	}
	return job, nil
}

// chunkView is a chunk as GET /v1/documents/{id}/chunks shows it.
type chunkView struct {
	Index     int    `json:"index"`
	Text      string `json:"text"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
}

// listChunks serves GET /v1/documents/{id}/chunks?limit=&cursor=: a page
// of the document's chunks in order; next_cursor, when not null, reads the
// next page.
func (s *Server) listChunks(w http.ResponseWriter, r *http.Request) error {
	id, err := documentID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := limitParam(q.Get("limit"))
	if err != nil {
		return err
	}
	from := 0
	if c := q.Get("cursor"); c != "" {
		if from, err = strconv.Atoi(c); err != nil || from < 0 {
			return errorf(http.StatusBadRequest, "invalid cursor")
		}
	}
	var chunks []*docket.Chunk
	err = s.cfg.Store.ReadTenant(r.Context(), tenantOf(r).ID, func(tx docket.Tx) error {
		chunks, err = tx.ChunkList(r.Context(), &docket.ChunkListParams{DocumentID: id, From: from, Limit: limit + 1})
		return err
	})
	if err != nil {
		return err
	}
	out := struct {
		Chunks     []chunkView `json:"chunks"`
		NextCursor *string     `json:"next_cursor"`
	}{Chunks: make([]chunkView, 0, min(len(chunks), limit))}
	if len(chunks) > limit {
		next := strconv.Itoa(chunks[limit].Index)
		out.NextCursor = &next
		chunks = chunks[:limit]
	}
	for _, c := range chunks {
		out.Chunks = append(out.Chunks, chunkView{Index: c.Index, Text: c.Text, PageStart: c.PageStart, PageEnd: c.PageEnd})
	}
	return writeJSON(w, http.StatusOK, out)
}
