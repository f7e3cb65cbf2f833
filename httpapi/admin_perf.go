package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/docketq/docket/queue"
)

// adminPerfWindow is the default window of GET /v1/admin/performance.
const adminPerfWindow = time.Hour

// PerformanceView is the processing performance of the document queue over
// a window, from the jobs completed in it.
type PerformanceView struct {
	Queue         string  `json:"queue"`
	WindowSeconds float64 `json:"window_seconds"`
	// Completed is how many jobs completed in the window (of at most
	// adminMaxScan read: Truncated says the sample hit that cap).
	Completed     int     `json:"completed"`
	Truncated     bool    `json:"truncated"`
	JobsPerMinute float64 `json:"jobs_per_minute"`
	// DurationSeconds is the run time of the last attempt (started_at to
	// completed_at).
	DurationSeconds Percentiles `json:"duration_seconds"`
	// QueueWaitSeconds is created_at to the start of the last attempt.
	QueueWaitSeconds Percentiles `json:"queue_wait_seconds"`
}

// Percentiles of a sample in seconds; null when the sample is empty.
type Percentiles struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// adminPerformance reports throughput and latency percentiles of the jobs
// completed within ?window= (a Go duration, default 1h).
func (s *Server) adminPerformance(w http.ResponseWriter, r *http.Request) error {
	window, err := adminDuration(r, "window", adminPerfWindow)
	if err != nil {
		return err
	}
	since := time.Now().Add(-window)
	recent := func(j *queue.Job) bool { return j.CompletedAt.After(since) }
	jobs, truncated, err := s.adminScanJobs(r.Context(), &queue.JobListParams{Queue: watchedQueue, States: []queue.State{queue.StateCompleted}}, recent)
	if err != nil {
		return err
	}
	var run, wait []float64
	for _, j := range jobs {
		if j.StartedAt.IsZero() {
			continue
		}
		run = append(run, j.CompletedAt.Sub(j.StartedAt).Seconds())
		wait = append(wait, j.StartedAt.Sub(j.CreatedAt).Seconds())
	}
	return writeJSON(w, http.StatusOK, PerformanceView{
		Queue: watchedQueue, WindowSeconds: window.Seconds(), Completed: len(jobs), Truncated: truncated,
		JobsPerMinute:   float64(len(jobs)) / window.Minutes(),
		DurationSeconds: percentiles(run), QueueWaitSeconds: percentiles(wait),
	})
}

// percentiles computes nearest-rank percentiles of xs (which it sorts).
func percentiles(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	slices.Sort(xs)
	at := func(p float64) *float64 {
		i := int(p*float64(len(xs))+0.999999) - 1 // ceil(p*n) - 1
		i = max(0, min(i, len(xs)-1))
		v := xs[i]
		return &v
	}
	return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99)}
}
