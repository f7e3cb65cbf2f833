package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// jobList is the body of GET /v1/jobs.
type jobList struct {
	Jobs       []JobView `json:"jobs"`
	NextCursor *string   `json:"next_cursor"`
}

// listJobs serves GET /v1/jobs?status=&limit=&cursor=: the tenant's
// document jobs, newest first.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
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
	var before int64
	if c := q.Get("cursor"); c != "" {
		if before, err = strconv.ParseInt(c, 10, 64); err != nil || before <= 0 {
			return errorf(http.StatusBadRequest, "invalid cursor")
		}
	}
	p := &queue.JobListParams{TenantID: t.ID, Queue: documentsQueue, BeforeID: before, Limit: limit + 1}
	if status != "" {
		p.States = status.JobStates()
	}
	var jobs []*queue.Job
	err = s.cfg.Store.ReadTenant(r.Context(), t.ID, func(tx docket.Tx) (err error) {
		jobs, err = s.cfg.Queue.ListTx(r.Context(), tx.Native(), p)
		return err
	})
	if err != nil {
		return err
	}
	out := jobList{Jobs: make([]JobView, 0, min(len(jobs), limit))}
	if len(jobs) > limit {
		jobs = jobs[:limit]
		c := strconv.FormatInt(jobs[limit-1].ID, 10)
		out.NextCursor = &c
	}
	for _, j := range jobs {
		v, err := s.jobStatusView(r.Context(), j)
		if err != nil {
			return err
		}
		out.Jobs = append(out.Jobs, v)
	}
	return writeJSON(w, http.StatusOK, out)
}

// getJob serves GET /v1/jobs/{id}.
func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.tenantJob(r)
	if err != nil {
		return err
	}
	v, err := s.jobStatusView(r.Context(), j)
	if err != nil {
		return err
	}
	if err := s.withSteps(r.Context(), &v, j); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// cancelJob serves POST /v1/jobs/{id}/cancel: 200 with the job, 409 when
// it has finished. The job is first found as getJob finds it, in the
// tenant's transaction (under row-level security on PostgreSQL); the
// cancel itself names the tenant too, so neither check alone decides.
func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	found, err := s.tenantJob(r)
	if err != nil {
		return err
	}
	j, err := s.cfg.Queue.Cancel(r.Context(), found.ID, t.ID)
	if errors.Is(err, docket.ErrConflict) {
		return errorf(http.StatusConflict, "job %d has already finished", found.ID)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, jobView(j, -1))
}

// tenantJob returns the job named by the path's id if it is the caller's;
// another tenant's job, or a malformed id, is not found. The job is read in
// the tenant's transaction: on PostgreSQL, row-level security hides other
// tenants' jobs from it as it hides their documents, beside the check here.
func (s *Server) tenantJob(r *http.Request) (*queue.Job, error) {
	id, err := parseJobID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	var j *queue.Job
	err = s.cfg.Store.ReadTenant(r.Context(), tenantOf(r).ID, func(tx docket.Tx) (err error) {
		j, err = s.cfg.Queue.GetTx(r.Context(), tx.Native(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if j.TenantID != tenantOf(r).ID {
		return nil, docket.ErrNotFound
	}
	return j, nil
}
