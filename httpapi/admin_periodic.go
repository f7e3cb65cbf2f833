package httpapi

import (
	"net/http"
	"time"

	"github.com/docketq/docket/queue"
)

// PeriodicView is one periodic task as GET /v1/admin/periodic and
// `docket periodic list --json` show it.
type PeriodicView struct {
	Name      string     `json:"name"`
	Schedule  string     `json:"schedule"`
	LastTick  *time.Time `json:"last_tick"`
	LastRunAt *time.Time `json:"last_run_at"`
	NextRun   time.Time  `json:"next_run"`
	Runs      int64      `json:"runs"`
	Missed    int64      `json:"missed"`
}

// PeriodicListView is the answer of GET /v1/admin/periodic.
type PeriodicListView struct {
	Periodic []PeriodicView `json:"periodic"`
}

// NewPeriodicListView renders the store's records.
func NewPeriodicListView(recs []*queue.PeriodicRecord) PeriodicListView {
	out := PeriodicListView{Periodic: make([]PeriodicView, len(recs))}
	for i, r := range recs {
		v := PeriodicView{Name: r.Name, Schedule: r.Schedule, NextRun: r.NextRun, Runs: r.Runs, Missed: r.Missed}
		if !r.LastTick.IsZero() {
			v.LastTick = &r.LastTick
		}
		if !r.LastRunAt.IsZero() {
			v.LastRunAt = &r.LastRunAt
		}
		out.Periodic[i] = v
	}
	return out
}

// adminPeriodic lists the periodic tasks the maintenance leader runs: the
// sweeps and the periodic jobs, each with its schedule and runs.
func (s *Server) adminPeriodic(w http.ResponseWriter, r *http.Request) error {
	recs, err := s.cfg.Queue.Periodic(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, NewPeriodicListView(recs))
}
