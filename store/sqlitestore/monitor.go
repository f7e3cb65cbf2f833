package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket"
)

// The monitoring views of PostgreSQL (postgres/migrations/005_monitoring.sql)
// as queries: the same columns and definitions, from the store's clock
// instead of now(). ?1 is now in unix microseconds, ?2 the queue ('' for
// all), ?3 the row limit of a list, ?4 docket.StuckAfter, ?5 whether to
// leave the finished states out of queue health; count(*) OVER () is the
// list's total before the limit. Times are microseconds.

const healthQueuesSQL = `SELECT queue, state, count(*), avg(age), max(age)
FROM (SELECT queue, state, max(?1 - coalesce(CASE state
             WHEN 'scheduled' THEN created_at
             WHEN 'pending' THEN run_at
             WHEN 'running' THEN started_at
             ELSE completed_at END, ?1), 0) AS age
      FROM docket_jobs WHERE (?2 = '' OR queue = ?2)
        AND (?5 = 0 OR state IN ('scheduled', 'pending', 'running')))
GROUP BY queue, state ORDER BY queue, state`

// healthPerformanceSQL ranks the completed jobs' durations per hour and
// queue; the 95th percentile by nearest rank is the one at rank
// ceil(0.95 n) = (95n + 99) / 100, as percentile_disc(0.95) picks.
const healthPerformanceSQL = `WITH f AS (
    SELECT completed_at / 3600000000 * 3600000000 AS hour, queue, state, attempt,
           CASE WHEN state = 'completed' THEN completed_at - started_at END AS dur
    FROM docket_jobs
    WHERE state IN ('completed', 'failed') AND completed_at >= (?1 / 3600000000 - 23) * 3600000000
      AND (?2 = '' OR queue = ?2)),
r AS (
    SELECT f.*, row_number() OVER (PARTITION BY hour, queue, dur IS NULL ORDER BY dur) AS rn,
           count(dur) OVER (PARTITION BY hour, queue) AS n
    FROM f)
SELECT hour, queue, sum(state = 'completed'), sum(state = 'failed'), avg(dur),
       max(CASE WHEN dur IS NOT NULL AND rn = (95 * n + 99) / 100 THEN dur END), max(attempt)
FROM r GROUP BY hour, queue ORDER BY hour, queue`

const healthStuckSQL = `SELECT id, queue, kind, tenant_id, attempt, max_attempts, worker_id, started_at,
    lease_expires_at, max(?1 - started_at, 0),
    CASE WHEN lease_expires_at < ?1 THEN 'lease_expired' ELSE 'running_too_long' END, count(*) OVER ()
FROM docket_jobs
WHERE state = 'running' AND (lease_expires_at < ?1 OR started_at < ?1 - ?4) AND (?2 = '' OR queue = ?2)
ORDER BY started_at, id LIMIT ?3`

const healthFailedSQL = `SELECT f.id, f.queue, f.kind, f.tenant_id, f.attempt, f.max_attempts,
    f.attempt >= f.max_attempts, f.error_message, f.created_at, f.completed_at, count(*) OVER ()
FROM docket_jobs f
WHERE f.state = 'failed' AND NOT EXISTS (SELECT 1 FROM docket_jobs r WHERE r.retry_of = f.id)
  AND (?2 = '' OR f.queue = ?2)
ORDER BY f.completed_at DESC, f.id DESC LIMIT ?3`

const healthDepthSQL = `SELECT queue, tenant_id, sum(state = 'pending') AS pending, sum(state = 'running') AS running,
    coalesce(max(?1 - min(CASE WHEN state = 'pending' THEN run_at END), 0), 0), count(*) OVER ()
FROM docket_jobs WHERE state IN ('pending', 'running') AND (?2 = '' OR queue = ?2)
GROUP BY queue, tenant_id
ORDER BY pending DESC, running DESC, queue, tenant_id LIMIT ?3`

var _ docket.Monitor = (*Store)(nil)

// HealthGet computes the monitoring views in one read transaction, at one
// reading of the store's clock.
func (s *Store) HealthGet(ctx context.Context, params *docket.HealthParams) (*docket.Health, error) {
	q, limit := "", params.HealthLimit()
	if params != nil {
		q = params.Queue
	}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read health: %w", docsError(err))
	}
	defer func() { _ = tx.Rollback() }()
	args := []any{s.clock(), q, limit, docket.StuckAfter.Microseconds(), params != nil && params.SkipFinished}
	h := &docket.Health{}
	wrap := func(view string, err error) error {
		return fmt.Errorf("read health: %s: %w", view, docsError(err))
	}
	if h.Queues, _, err = query(ctx, tx, scanQueueHealth, healthQueuesSQL, args); err != nil {
		return nil, wrap("docket_queue_health", err)
	}
	if params == nil || !params.SkipPerformance {
		if h.Performance, _, err = query(ctx, tx, scanHourPerformance, healthPerformanceSQL, args); err != nil {
			return nil, wrap("docket_processing_performance", err)
		}
	}
	if h.Stuck, h.StuckTotal, err = query(ctx, tx, scanStuckJob, healthStuckSQL, args); err != nil {
		return nil, wrap("docket_stuck_jobs", err)
	}
	if h.Failed, h.FailedTotal, err = query(ctx, tx, scanFailedJob, healthFailedSQL, args); err != nil {
		return nil, wrap("docket_failed_jobs", err)
	}
	if h.Depth, h.DepthTotal, err = query(ctx, tx, scanTenantDepth, healthDepthSQL, args); err != nil {
		return nil, wrap("docket_queue_depth", err)
	}
	return h, nil
}

// query runs text with the arguments it names and scans each row with
// scan, which returns the row and the list's total (0 where the query has
// none).
func query[T any](ctx context.Context, tx *sql.Tx, scan func(*sql.Rows) (T, int, error), text string, args []any) ([]T, int, error) {
	rows, err := tx.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, total := []T{}, 0
	for rows.Next() {
		v, n, err := scan(rows)
		if err != nil {
			return nil, 0, err
		}
		out, total = append(out, v), n
	}
	return out, total, rows.Err()
}

func scanQueueHealth(r *sql.Rows) (docket.QueueHealth, int, error) {
	var v docket.QueueHealth
	var avg float64
	var maxAge int64
	err := r.Scan(&v.Queue, &v.State, &v.Jobs, &avg, &maxAge)
	v.AvgAge, v.MaxAge = micros(avg), micros(float64(maxAge))
	return v, 0, err
}

func scanHourPerformance(r *sql.Rows) (docket.HourPerformance, int, error) {
	var v docket.HourPerformance
	var hour int64
	var avg sql.NullFloat64
	var p95 sql.NullInt64
	err := r.Scan(&hour, &v.Queue, &v.Completed, &v.Failed, &avg, &p95, &v.MaxAttempts)
	v.Hour = fromMicros(hour)
	if avg.Valid {
		d := micros(avg.Float64)
		v.AvgDuration = &d
	}
	if p95.Valid {
		d := micros(float64(p95.Int64))
		v.P95Duration = &d
	}
	return v, 0, err
}

func scanStuckJob(r *sql.Rows) (docket.StuckJob, int, error) {
	var v docket.StuckJob
	var started, lease sql.NullInt64
	var running int64
	var total int
	err := r.Scan(&v.ID, &v.Queue, &v.Kind, &v.TenantID, &v.Attempt, &v.MaxAttempts, &v.WorkerID,
		&started, &lease, &running, &v.Reason, &total)
	v.StartedAt, v.LeaseExpiresAt, v.Running = nullTime(started), nullTime(lease), micros(float64(running))
	return v, total, err
}

func scanFailedJob(r *sql.Rows) (docket.FailedJob, int, error) {
	var v docket.FailedJob
	var created int64
	var completed sql.NullInt64
	var total int
	err := r.Scan(&v.ID, &v.Queue, &v.Kind, &v.TenantID, &v.Attempt, &v.MaxAttempts, &v.AttemptsExhausted,
		&v.ErrorMessage, &created, &completed, &total)
	v.CreatedAt, v.CompletedAt = fromMicros(created), nullTime(completed)
	return v, total, err
}

func scanTenantDepth(r *sql.Rows) (docket.TenantDepth, int, error) {
	var v docket.TenantDepth
	var oldest int64
	var total int
	err := r.Scan(&v.Queue, &v.TenantID, &v.Pending, &v.Running, &oldest, &total)
	v.OldestPendingAge = micros(float64(oldest))
	return v, total, err
}

// micros converts microseconds to a duration.
func micros(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }
