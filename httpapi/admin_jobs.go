package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// QueueHealthView is the document queue's health.
type QueueHealthView struct {
	Queue                string         `json:"queue"`
	Counts               map[string]int `json:"counts"`
	OldestPendingSeconds float64        `json:"oldest_pending_age_seconds"`
	DeadTuples           int64          `json:"dead_tuples"`
	OldestXactAgeSeconds float64        `json:"oldest_transaction_age_seconds"`
	Paused               bool           `json:"paused"`
}

func (s *Server) adminQueueHealth(w http.ResponseWriter, r *http.Request) error {
	st, err := s.cfg.Queue.Stats(r.Context(), watchedQueue)
	if err != nil {
		return err
	}
	v := QueueHealthView{
		Queue: st.Queue, Counts: make(map[string]int, len(healthStates)),
		OldestPendingSeconds: st.OldestPendingAge.Seconds(), DeadTuples: st.DeadTuples,
		OldestXactAgeSeconds: st.OldestXactAge.Seconds(), Paused: st.Paused,
	}
	for _, state := range healthStates {
		v.Counts[string(state)] = 0
	}
	for state, n := range st.Counts {
		v.Counts[string(state)] = n
	}
	return writeJSON(w, http.StatusOK, v)
}

// Bounds of the admin job listings.
const (
	adminStuckAfter  = 30 * time.Minute
	adminDefaultPage = 50
	adminMaxPage     = 200
	// adminMaxScan caps the jobs one admin request reads (stuck scan,
	// performance sample).
	adminMaxScan = 5000
)

// StuckJobView is a running job that looks stuck, and why.
type StuckJobView struct {
	JobView
	// Reason is "lease_expired" (its worker stopped heartbeating; the
	// rescue sweep has not run yet) or "running_too_long" (over older_than
	// while still heartbeating).
	Reason         string     `json:"reason"`
	WorkerID       string     `json:"worker_id"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
	RunningSeconds float64    `json:"running_seconds"`
}

// adminStuckJobs lists running jobs whose lease has expired or that have
// run longer than ?older_than= (a Go duration, default 30m).
func (s *Server) adminStuckJobs(w http.ResponseWriter, r *http.Request) error {
	olderThan, err := adminDuration(r, "older_than", adminStuckAfter)
	if err != nil {
		return err
	}
	jobs, truncated, err := s.adminScanJobs(r.Context(), &queue.JobListParams{Queue: watchedQueue, States: []queue.State{queue.StateRunning}}, nil)
	if err != nil {
		return err
	}
	now := time.Now()
	out := []StuckJobView{}
	for _, j := range jobs {
		reason := ""
		switch {
		case !j.LeaseExpiresAt.IsZero() && j.LeaseExpiresAt.Before(now):
			reason = "lease_expired"
		case !j.StartedAt.IsZero() && now.Sub(j.StartedAt) > olderThan:
			reason = "running_too_long"
		default:
			continue
		}
		v := StuckJobView{JobView: jobView(j, -1), Reason: reason, WorkerID: j.WorkerID, LeaseExpiresAt: timePtr(j.LeaseExpiresAt)}
		if !j.StartedAt.IsZero() {
			v.RunningSeconds = now.Sub(j.StartedAt).Seconds()
		}
		out = append(out, v)
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"older_than_seconds": olderThan.Seconds(), "jobs": out, "truncated": truncated,
	})
}

// adminScanJobs pages through a listing, newest first, keeping the jobs keep
// accepts (all when nil), until the listing ends, a whole page is refused
// (keep saw jobs too old) or adminMaxScan jobs were read (truncated).
func (s *Server) adminScanJobs(ctx context.Context, p *queue.JobListParams, keep func(*queue.Job) bool) ([]*queue.Job, bool, error) {
	const page = 1000
	var out []*queue.Job
	q := *p
	q.Limit = page
	for read := 0; read < adminMaxScan; {
		jobs, err := s.cfg.Queue.List(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		kept := 0
		for _, j := range jobs {
			if keep == nil || keep(j) {
				out = append(out, j)
				kept++
			}
		}
		read += len(jobs)
		if len(jobs) < page || kept == 0 {
			return out, false, nil
		}
		q.BeforeID = jobs[len(jobs)-1].ID
	}
	return out, true, nil
}

// adminFailedJobs lists failed jobs, newest first: ?limit= (1-200,
// default 50), ?cursor= (next_cursor of the previous page), ?tenant_id=.
func (s *Server) adminFailedJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := adminInt(q.Get("limit"), "limit", adminDefaultPage, 1, adminMaxPage)
	if err != nil {
		return err
	}
	p := &queue.JobListParams{Queue: watchedQueue, States: []queue.State{queue.StateFailed}, TenantID: q.Get("tenant_id"), Limit: limit}
	if c := q.Get("cursor"); c != "" {
		if p.BeforeID, err = strconv.ParseInt(c, 10, 64); err != nil || p.BeforeID <= 0 {
			return errorf(http.StatusBadRequest, "cursor %q: want the next_cursor of a previous page", c)
		}
	}
	jobs, err := s.cfg.Queue.List(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]JobView, len(jobs))
	for i, j := range jobs {
		out[i] = jobView(j, -1)
	}
	var next *string
	if len(jobs) == limit {
		c := strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
		next = &c
	}
	return writeJSON(w, http.StatusOK, map[string]any{"jobs": out, "next_cursor": next})
}

// AttemptView is an attempt of a job as GET /v1/admin/jobs/{id} shows it:
// a finished one from the job's history, or the one running now (outcome
// "running", ended_at null).
type AttemptView struct {
	Attempt  int    `json:"attempt"`
	WorkerID string `json:"worker_id"`
	// StartedAt is null when the store did not record it.
	StartedAt *time.Time `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// Outcome is how it ended: completed, retry (failed; the job runs
	// again), failed (for good), snoozed, released (its worker stopped),
	// timed_out (its lease ran out; rescued), cancelled; or running.
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// JobDetailView is a job with its attempts, oldest first.
type JobDetailView struct {
	Job      JobView       `json:"job"`
	Attempts []AttemptView `json:"attempts"`
}

// NewJobDetailView renders a job and its finished attempts, adding the
// running attempt of a running job (for the CLI).
func NewJobDetailView(j *queue.Job, attempts []*queue.Attempt) JobDetailView {
	v := JobDetailView{Job: jobView(j, -1), Attempts: make([]AttemptView, 0, len(attempts)+1)}
	for _, a := range attempts {
		v.Attempts = append(v.Attempts, AttemptView{
			Attempt: a.Attempt, WorkerID: a.WorkerID, StartedAt: timePtr(a.StartedAt),
			EndedAt: timePtr(a.FinishedAt), Outcome: string(a.Outcome), Error: a.Error,
		})
	}
	if j.State == queue.StateRunning {
		v.Attempts = append(v.Attempts, AttemptView{
			Attempt: j.Attempt, WorkerID: j.WorkerID, StartedAt: timePtr(j.StartedAt), Outcome: "running",
		})
	}
	return v
}

// adminJobGet shows a job of any tenant with its attempt history: 400 for
// an id that is not a positive integer, 404 for an unknown one.
func (s *Server) adminJobGet(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return errorf(http.StatusBadRequest, "job id %q: want a positive integer", r.PathValue("id"))
	}
	j, err := s.cfg.Queue.Get(r.Context(), id)
	if err != nil {
		return err
	}
	attempts, err := s.cfg.Queue.Attempts(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, NewJobDetailView(j, attempts))
}

// adminRequeue retries a failed or cancelled job: a new job linked to it
// by retry_of (the original stays as it was). A document job is retried in
// its tenant's transaction, together with moving the document to the new
// job when the old one was its current job.
func (s *Server) adminRequeue(w http.ResponseWriter, r *http.Request) error {
	id, err := parseJobID(r.PathValue("id"))
	if err != nil {
		return err
	}
	old, err := s.cfg.Queue.Get(r.Context(), id)
	if err != nil {
		return err
	}
	var job *queue.Job
	if docket.DocumentIDOf(old) == "" {
		job, err = s.cfg.Queue.Retry(r.Context(), id, "")
	} else {
		job, err = s.adminRetryDocumentJob(r.Context(), old)
		if err == nil {
			s.cfg.Queue.PublishInserted(job) // after the commit: RetryTx does not

		}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/jobs/"+strconv.FormatInt(job.ID, 10))
	return writeJSON(w, http.StatusAccepted, map[string]any{"job": jobView(job, -1)})
}

// adminRetryDocumentJob retries old and, in the same transaction, points
// its document at the new job if old was the document's current job (a
// deleted document is left alone).
func (s *Server) adminRetryDocumentJob(ctx context.Context, old *queue.Job) (*queue.Job, error) {
	var job *queue.Job
	err := s.cfg.Store.InTenant(ctx, old.TenantID, func(tx docket.Tx) error {
		var err error
		if job, err = s.cfg.Queue.RetryTx(ctx, tx.Native(), old.ID, old.TenantID); err != nil {
			return err // the driver's error names the job already
		}
		docID := docket.DocumentIDOf(old)
		doc, err := tx.DocumentGet(ctx, docID)
		if errors.Is(err, docket.ErrNotFound) || (err == nil && doc.JobID != old.ID) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: docID, JobID: &job.ID})
		return err
	})
	return job, err
}

// adminDiscard fails a scheduled, pending or running job at once, to
// unblock its tenant from a poisoned job. Optional body {"reason": "..."}.
func (s *Server) adminDiscard(w http.ResponseWriter, r *http.Request) error {
	id, err := parseJobID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var in struct {
		Reason string `json:"reason"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
	}
	if in.Reason == "" {
		in.Reason = "discarded by an administrator"
	}
	job, err := s.cfg.Queue.Discard(r.Context(), id, in.Reason)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"job": jobView(job, -1)})
}
