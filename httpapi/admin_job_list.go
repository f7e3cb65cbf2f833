package httpapi

import (
	"net/http"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// adminJobList serves GET /v1/admin/jobs?tenant=&status=&limit=: the jobs
// of every tenant (or one), newest first, of any status or one of pending,
// processing, completed, failed and cancelled; limit 1-500, default 50.
// The body is {"jobs": [...]}, as `docket jobs list --json` prints it.
func (s *Server) adminJobList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := limitParam(q.Get("limit"))
	if err != nil {
		return err
	}
	p := &queue.JobListParams{TenantID: q.Get("tenant"), Limit: limit}
	if status := q.Get("status"); status != "" {
		st := docket.DocumentStatus(status)
		if !st.Valid() {
			return errorf(http.StatusBadRequest, "status %q: want pending, processing, completed, failed or cancelled", status)
		}
		p.States = st.JobStates()
	}
	jobs, err := s.cfg.Queue.List(r.Context(), p)
	if err != nil {
		return err
	}
	views := make([]JobView, len(jobs))
	for i, j := range jobs {
		views[i] = jobView(j, -1)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"jobs": views})
}

// adminCancel cancels a pending or running job of any tenant: 200
// {"job": ...}; 404 for an unknown job, 409 for a finished one.
func (s *Server) adminCancel(w http.ResponseWriter, r *http.Request) error {
	id, err := parseJobID(r.PathValue("id"))
	if err != nil {
		return err
	}
	job, err := s.cfg.Queue.Cancel(r.Context(), id, "")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"job": jobView(job, -1)})
}
