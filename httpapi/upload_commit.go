package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// uploadResponse is the body of a 202 to POST /v1/documents.
type uploadResponse struct {
	Document DocumentView `json:"document"`
	Job      JobView      `json:"job"`
}

// uploadResult is the answer to an upload: fresh or replayed.
type uploadResult struct {
	status int
	body   []byte
	jobID  string
	replay bool
}

// errIdempotencySeen stops the upload's transaction when its key was
// already recorded.
var errIdempotencySeen = errors.New("idempotency key already recorded")

// commit takes the upload's rate-limit slot and creates the document and
// its job in one transaction, with the idempotency record when the request
// has a key. A key already recorded (before or concurrently) replays its
// response, or is a 422 when the body differs, and takes no slot; a window
// filled since the check before the body is a 429. Whenever it does not
// commit, this upload's blob is deleted (cleanup).
func (u *upload) commit(ctx context.Context) (*uploadResult, error) {
	var (
		prior  *docket.IdempotencyRecord
		job    *queue.Job
		res    *uploadResult
		idemUp bool // IdempotencyInsert found the key taken
	)
	err := u.s.cfg.Store.InTenant(ctx, u.tenant.ID, func(tx docket.Tx) error {
		if u.idemKey != "" {
			rec, err := tx.IdempotencyGet(ctx, u.idemKey)
			if err == nil {
				prior = rec
				return errIdempotencySeen
			}
			if !errors.Is(err, docket.ErrNotFound) {
				return err
			}
		}
		rl, err := tx.RateLimitTake(ctx, rateParams(u.tenant))
		if err != nil {
			return err
		}
		if !rl.Allowed {
			return rateLimited(rl)
		}
		if job, err = u.insert(ctx, tx); err != nil || u.idemKey == "" {
			return err
		}
		if res, err = u.record(ctx, tx, job); errors.Is(err, docket.ErrDuplicate) {
			idemUp = true
		}
		return err
	})
	var refused *httpError
	switch {
	case errors.Is(err, errIdempotencySeen):
		return u.replay(prior)
	case idemUp:
		return u.replayStored(ctx)
	case errors.As(err, &refused):
		return nil, refused
	case err != nil:
		return nil, fmt.Errorf("create document: %w", err)
	}
	u.committed = true
	u.s.cfg.Queue.PublishInserted(job) // after the commit: EnqueueTx does not
	if res != nil {
		return res, nil
	}
	return u.fresh(ctx, job)
}

// insert enqueues the document's job and stores the document.
func (u *upload) insert(ctx context.Context, tx docket.Tx) (*queue.Job, error) {
	p := docket.DocumentJob.Params(u.tenant.ID, docket.DocumentArgs{DocumentID: u.doc.ID})
	p.Queue = docket.DocumentQueue
	p.Cost = docket.DocumentCost(u.doc.Size)
	ins, err := u.s.cfg.Queue.EnqueueTx(ctx, tx.Native(), p)
	if err != nil {
		return nil, err
	}
	u.doc.JobID = ins.Job.ID
	if err := tx.DocumentInsert(ctx, u.doc); err != nil {
		return nil, err
	}
	return ins.Job, nil
}

// record renders the response inside the transaction (the queue position
// as the transaction sees it) and stores it under the idempotency key.
func (u *upload) record(ctx context.Context, tx docket.Tx, job *queue.Job) (*uploadResult, error) {
	v := jobView(job, -1)
	if p, err := u.s.cfg.Queue.PositionTx(ctx, tx.Native(), job.ID); err == nil {
		v = jobView(job, p.Ahead)
		v.Paused = p.Paused
	}
	res, err := u.render(job, v)
	if err != nil {
		return nil, err
	}
	err = tx.IdempotencyInsert(ctx, &docket.IdempotencyRecord{
		Key: u.idemKey, RequestHash: u.requestHash, StatusCode: res.status,
		Body: res.body, DocumentID: u.doc.ID,
	})
	return res, err
}

// fresh answers a committed upload, with the job's queue position now and
// whether it waits on a paused queue or tenant, as GET /v1/jobs/{id} does.
func (u *upload) fresh(ctx context.Context, job *queue.Job) (*uploadResult, error) {
	v, err := u.s.jobStatusView(ctx, job)
	if err != nil {
		return nil, err
	}
	return u.render(job, v)
}

func (u *upload) render(job *queue.Job, v JobView) (*uploadResult, error) {
	b, err := json.Marshal(uploadResponse{Document: documentView(u.doc), Job: v})
	if err != nil {
		return nil, err
	}
	return &uploadResult{status: http.StatusAccepted, body: append(b, '\n'), jobID: fmt.Sprint(job.ID)}, nil
}

// replayStored replays the record a concurrent request with the same key
// committed first.
func (u *upload) replayStored(ctx context.Context) (*uploadResult, error) {
	var rec *docket.IdempotencyRecord
	err := u.s.cfg.Store.ReadTenant(ctx, u.tenant.ID, func(tx docket.Tx) error {
		var err error
		rec, err = tx.IdempotencyGet(ctx, u.idemKey)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read idempotency record: %w", err)
	}
	return u.replay(rec)
}

// replay answers with a recorded response, or 422 when this request's body
// is not the recorded one's.
func (u *upload) replay(rec *docket.IdempotencyRecord) (*uploadResult, error) {
	if rec.RequestHash != u.requestHash {
		return nil, errorf(http.StatusUnprocessableEntity,
			"Idempotency-Key %q was used with a different file or filename", u.idemKey)
	}
	var v struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	_ = json.Unmarshal(rec.Body, &v)
	return &uploadResult{status: rec.StatusCode, body: rec.Body, jobID: v.Job.ID, replay: true}, nil
}

// write sends the result.
func (res *uploadResult) write(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if res.jobID != "" && res.status == http.StatusAccepted {
		h.Set("Location", "/v1/jobs/"+res.jobID)
	}
	if res.replay {
		h.Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(res.status)
	if _, err := w.Write(res.body); err != nil {
		return fmt.Errorf("%w: %w", errResponseStarted, err)
	}
	return nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
