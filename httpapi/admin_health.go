package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/docketq/docket"
)

// HealthView is GET /v1/admin/health: the monitoring views
// (docs/monitoring.md), named as their columns are.
type HealthView struct {
	// Queue is the queue the views were limited to; "" for every queue.
	Queue                 string                `json:"queue"`
	QueueHealth           []QueueStateView      `json:"queue_health"`
	ProcessingPerformance []HourPerformanceView `json:"processing_performance"`
	StuckJobs             StuckJobsView         `json:"stuck_jobs"`
	FailedJobs            FailedJobsView        `json:"failed_jobs"`
	QueueDepth            QueueDepthView        `json:"queue_depth"`
	// Database is the store's health (admin_health_db.go); the CLI's
	// health, read from the store directly, leaves it out.
	Database *DatabaseHealthView `json:"database,omitempty"`
	// PausedQueues are the paused queues, with jobs or not
	// (admin_pause.go).
	PausedQueues []string `json:"paused_queues,omitempty"`
}

// QueueStateView is a row of docket_queue_health.
type QueueStateView struct {
	Queue         string  `json:"queue"`
	State         string  `json:"state"`
	Jobs          int     `json:"jobs"`
	AvgAgeSeconds float64 `json:"avg_age_seconds"`
	MaxAgeSeconds float64 `json:"max_age_seconds"`
	// Paused: the queue is paused (admin_pause.go).
	Paused bool `json:"paused"`
}

// HourPerformanceView is a row of docket_processing_performance.
type HourPerformanceView struct {
	Hour               time.Time `json:"hour"`
	Queue              string    `json:"queue"`
	Completed          int       `json:"completed"`
	Failed             int       `json:"failed"`
	AvgDurationSeconds *float64  `json:"avg_duration_seconds"`
	P95DurationSeconds *float64  `json:"p95_duration_seconds"`
	MaxAttempts        int       `json:"max_attempts"`
}

// StuckJobsView is docket_stuck_jobs: up to limit rows and the total.
type StuckJobsView struct {
	Total int               `json:"total"`
	Jobs  []StuckJobRowView `json:"jobs"`
}

// StuckJobRowView is a row of docket_stuck_jobs.
type StuckJobRowView struct {
	ID             string    `json:"id"`
	Queue          string    `json:"queue"`
	Kind           string    `json:"kind"`
	TenantID       string    `json:"tenant_id"`
	Attempt        int       `json:"attempt"`
	MaxAttempts    int       `json:"max_attempts"`
	WorkerID       string    `json:"worker_id"`
	StartedAt      time.Time `json:"started_at"`
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
	RunningSeconds float64   `json:"running_seconds"`
	Reason         string    `json:"reason"`
}

// FailedJobsView is docket_failed_jobs: up to limit rows and the total.
type FailedJobsView struct {
	Total int                `json:"total"`
	Jobs  []FailedJobRowView `json:"jobs"`
}

// FailedJobRowView is a row of docket_failed_jobs.
type FailedJobRowView struct {
	ID                string    `json:"id"`
	Queue             string    `json:"queue"`
	Kind              string    `json:"kind"`
	TenantID          string    `json:"tenant_id"`
	Attempt           int       `json:"attempt"`
	MaxAttempts       int       `json:"max_attempts"`
	AttemptsExhausted bool      `json:"attempts_exhausted"`
	ErrorMessage      string    `json:"error_message"`
	CreatedAt         time.Time `json:"created_at"`
	CompletedAt       time.Time `json:"completed_at"`
}

// QueueDepthView is docket_queue_depth: up to limit rows, deepest first,
// and how many (queue, tenant) pairs have work.
type QueueDepthView struct {
	Total   int               `json:"total"`
	Tenants []TenantDepthView `json:"tenants"`
}

// TenantDepthView is a row of docket_queue_depth.
type TenantDepthView struct {
	Queue                   string  `json:"queue"`
	TenantID                string  `json:"tenant_id"`
	Pending                 int     `json:"pending"`
	Running                 int     `json:"running"`
	OldestPendingAgeSeconds float64 `json:"oldest_pending_age_seconds"`
	// Paused: the queue or the tenant is paused (admin_pause.go).
	Paused bool `json:"paused"`
}

// adminHealth serves the monitoring views: ?queue= (default every queue),
// ?limit= (rows of each list, 1-docket.MaxHealthLimit, default
// docket.DefaultHealthLimit), ?performance=false and ?finished=false to
// leave out the two parts that read every finished job kept (for a page
// that polls).
func (s *Server) adminHealth(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := adminInt(q.Get("limit"), "limit", docket.DefaultHealthLimit, 1, docket.MaxHealthLimit)
	if err != nil {
		return err
	}
	performance, err := adminBool(q.Get("performance"), "performance")
	if err != nil {
		return err
	}
	finished, err := adminBool(q.Get("finished"), "finished")
	if err != nil {
		return err
	}
	p := &docket.HealthParams{Queue: q.Get("queue"), Limit: limit, SkipPerformance: !performance, SkipFinished: !finished}
	v, err := s.health(r.Context(), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// health reads the monitoring views and the store's health.
func (s *Server) health(ctx context.Context, p *docket.HealthParams) (*HealthView, error) {
	h, err := s.cfg.Store.HealthGet(ctx, p)
	if err != nil {
		return nil, err
	}
	v := NewHealthView(p.Queue, h)
	if v.Database, err = s.databaseHealth(ctx); err != nil {
		return nil, err
	}
	if err := s.markHealthPaused(ctx, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// NewHealthView renders the monitoring views as the admin API shows them
// (for the CLI).
func NewHealthView(queue string, h *docket.Health) HealthView {
	v := HealthView{
		Queue:                 queue,
		QueueHealth:           make([]QueueStateView, len(h.Queues)),
		ProcessingPerformance: make([]HourPerformanceView, len(h.Performance)),
		StuckJobs:             StuckJobsView{Total: h.StuckTotal, Jobs: make([]StuckJobRowView, len(h.Stuck))},
		FailedJobs:            FailedJobsView{Total: h.FailedTotal, Jobs: make([]FailedJobRowView, len(h.Failed))},
		QueueDepth:            QueueDepthView{Total: h.DepthTotal, Tenants: make([]TenantDepthView, len(h.Depth))},
	}
	for i, r := range h.Queues {
		v.QueueHealth[i] = QueueStateView{r.Queue, r.State, r.Jobs, r.AvgAge.Seconds(), r.MaxAge.Seconds(), false}
	}
	for i, r := range h.Performance {
		v.ProcessingPerformance[i] = HourPerformanceView{r.Hour, r.Queue, r.Completed, r.Failed,
			secondsPtr(r.AvgDuration), secondsPtr(r.P95Duration), r.MaxAttempts}
	}
	for i, r := range h.Stuck {
		v.StuckJobs.Jobs[i] = StuckJobRowView{strconv.FormatInt(r.ID, 10), r.Queue, r.Kind, r.TenantID,
			r.Attempt, r.MaxAttempts, r.WorkerID, r.StartedAt, r.LeaseExpiresAt, r.Running.Seconds(), r.Reason}
	}
	for i, r := range h.Failed {
		v.FailedJobs.Jobs[i] = FailedJobRowView{strconv.FormatInt(r.ID, 10), r.Queue, r.Kind, r.TenantID,
			r.Attempt, r.MaxAttempts, r.AttemptsExhausted, r.ErrorMessage, r.CreatedAt, r.CompletedAt}
	}
	for i, r := range h.Depth {
		v.QueueDepth.Tenants[i] = TenantDepthView{r.Queue, r.TenantID, r.Pending, r.Running, r.OldestPendingAge.Seconds(), false}
	}
	return v
}

func secondsPtr(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	s := d.Seconds()
	return &s
}

// adminBool parses a boolean query value; empty is true.
func adminBool(s, name string) (bool, error) {
	if s == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errorf(http.StatusBadRequest, "%s %q: want true or false", name, s)
	}
	return b, nil
}
