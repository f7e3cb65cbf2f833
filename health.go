package docket

import (
	"context"
	"time"
)

// Monitor reads the queue's monitoring views (docs/monitoring.md): the
// numbers behind GET /v1/admin/health, `docket queue health` and the
// metrics' database gauges. On PostgreSQL they are SQL views any client
// can read (docket_queue_health, docket_processing_performance,
// docket_stuck_jobs, docket_failed_jobs, docket_queue_depth); SQLite
// computes the same columns with the same definitions. Every
// implementation passes storetest.RunMonitor.
type Monitor interface {
	// HealthGet reads every view at one moment of the store's clock.
	HealthGet(ctx context.Context, params *HealthParams) (*Health, error)
}

// Bounds and thresholds of the monitoring views.
const (
	// StuckAfter is how long a job may run, heartbeating, before
	// docket_stuck_jobs lists it as running_too_long.
	StuckAfter = 30 * time.Minute
	// PerformanceHours is how many hourly buckets
	// docket_processing_performance covers: the current hour and the 23
	// before it.
	PerformanceHours = 24
	// DefaultHealthLimit and MaxHealthLimit bound the rows HealthGet
	// returns of each list (stuck, failed, depth).
	DefaultHealthLimit = 100
	MaxHealthLimit     = 1000
)

// HealthParams says what HealthGet reads.
type HealthParams struct {
	// Queue limits every view to one queue; empty: every queue.
	Queue string
	// Limit bounds the rows of Stuck, Failed and Depth (their totals are
	// counted in full). 0: DefaultHealthLimit; at most MaxHealthLimit.
	Limit int
	// SkipPerformance leaves Performance empty: it reads every job
	// finished in the last 24 hours, the dearest of the views, which the
	// metrics poller does not need.
	SkipPerformance bool
	// SkipFinished leaves the completed, failed and cancelled rows out of
	// Queues: counting them reads every finished job still kept, while the
	// other states are read through their own small indexes.
	SkipFinished bool
}

// Health is the content of the monitoring views.
type Health struct {
	// Queues: per queue and state (docket_queue_health), by queue then
	// state name.
	Queues []QueueHealth
	// Performance: per hour and queue over PerformanceHours
	// (docket_processing_performance), oldest hour first. Hours in which
	// no job of a queue finished have no row.
	Performance []HourPerformance
	// Stuck: running jobs whose lease expired or that have run longer
	// than StuckAfter (docket_stuck_jobs), longest running first.
	Stuck      []StuckJob
	StuckTotal int
	// Failed: failed jobs not retried yet (docket_failed_jobs), newest
	// first.
	Failed      []FailedJob
	FailedTotal int
	// Depth: pending and running jobs per queue and tenant
	// (docket_queue_depth), deepest backlog first; DepthTotal counts the
	// (queue, tenant) pairs.
	Depth      []TenantDepth
	DepthTotal int
}

// QueueHealth is one row of docket_queue_health: the jobs of a queue in one
// state and how long they have been in it (since created_at for
// scheduled, run_at for pending, started_at for running, completed_at for
// completed, failed and cancelled).
type QueueHealth struct {
	Queue  string
	State  string
	Jobs   int
	AvgAge time.Duration
	MaxAge time.Duration
}

// HourPerformance is one row of docket_processing_performance: the jobs of
// a queue that finished in one hour.
type HourPerformance struct {
	Hour      time.Time // the hour's start, UTC
	Queue     string
	Completed int
	Failed    int
	// AvgDuration and P95Duration are the run times (started_at to
	// completed_at) of the completed jobs, P95 by nearest rank
	// (percentile_disc); nil when none completed.
	AvgDuration *time.Duration
	P95Duration *time.Duration
	// MaxAttempts is the most attempts a finished job took.
	MaxAttempts int
}

// StuckJob is one row of docket_stuck_jobs.
type StuckJob struct {
	ID             int64
	Queue          string
	Kind           string
	TenantID       string
	Attempt        int
	MaxAttempts    int
	WorkerID       string
	StartedAt      time.Time
	LeaseExpiresAt time.Time
	Running        time.Duration
	// Reason is "lease_expired" (the worker stopped heartbeating; the
	// rescue sweep has not run yet) or "running_too_long".
	Reason string
}

// FailedJob is one row of docket_failed_jobs: a failed job that no job
// retries (retry_of) yet.
type FailedJob struct {
	ID          int64
	Queue       string
	Kind        string
	TenantID    string
	Attempt     int
	MaxAttempts int
	// AttemptsExhausted: it failed on its last allowed attempt (else its
	// error was permanent, it timed out with fail-on-timeout, or it was
	// discarded).
	AttemptsExhausted bool
	ErrorMessage      string
	CreatedAt         time.Time
	CompletedAt       time.Time
}

// TenantDepth is one row of docket_queue_depth.
type TenantDepth struct {
	Queue    string
	TenantID string
	Pending  int
	Running  int
	// OldestPendingAge is how long its oldest pending job has waited
	// (since run_at); 0 with none pending.
	OldestPendingAge time.Duration
}

// HealthLimit returns p's Limit with its default and bound applied.
func (p *HealthParams) HealthLimit() int {
	switch {
	case p == nil || p.Limit <= 0:
		return DefaultHealthLimit
	case p.Limit > MaxHealthLimit:
		return MaxHealthLimit
	}
	return p.Limit
}

// HorizonHolder is a session whose open transaction holds back vacuum's
// horizon (PostgreSQL; the view docket_horizon_holders): while it stays
// open, no row version that died after it began can be removed, and dead
// rows pile up in the jobs table.
type HorizonHolder struct {
	PID         int    // the server process: pg_terminate_backend(PID) ends it
	User        string // its role
	Application string // its application_name
	ClientAddr  string // "" on a Unix socket
	State       string // e.g. "idle in transaction"
	// XIDAge is how many transaction ids ago its transaction id or
	// snapshot, the older of the two, was taken.
	XIDAge int64
	// TransactionAge is how long ago its transaction began; StateAge how
	// long it has been in State (idle in transaction: since its last
	// statement).
	TransactionAge, StateAge time.Duration
	TransactionStart         time.Time
}
