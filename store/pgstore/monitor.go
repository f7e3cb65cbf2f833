package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// The monitoring views are defined in the engine's
// postgres/repeatable/ (the monitoring views);
// HealthGet reads them in one read-only, repeatable-read transaction, so
// every view sees the same now(). $1 is the queue ('' for all), $2 the row
// limit of a list; count(*) OVER () is the list's total before the limit.

const healthQueuesSQL = `SELECT queue, state, jobs, avg_age_seconds, max_age_seconds
FROM docket_queue_health WHERE ($1 = '' OR queue = $1) ORDER BY queue, state`

// healthActiveQueuesSQL is healthQueuesSQL without the finished states: the
// view's branches for them are planned away.
const healthActiveQueuesSQL = `SELECT queue, state, jobs, avg_age_seconds, max_age_seconds
FROM docket_queue_health WHERE ($1 = '' OR queue = $1) AND state IN ('scheduled', 'pending', 'running')
ORDER BY queue, state`

const healthPerformanceSQL = `SELECT hour, queue, completed, failed, avg_duration_seconds, p95_duration_seconds, max_attempts
FROM docket_processing_performance WHERE $1 = '' OR queue = $1 ORDER BY hour, queue`

const healthStuckSQL = `SELECT id, queue, kind, tenant_id, attempt, max_attempts, worker_id, started_at,
    lease_expires_at, running_seconds, reason, count(*) OVER ()
FROM docket_stuck_jobs WHERE $1 = '' OR queue = $1 ORDER BY started_at, id LIMIT $2`

const healthFailedSQL = `SELECT id, queue, kind, tenant_id, attempt, max_attempts, attempts_exhausted,
    error_message, created_at, completed_at, count(*) OVER ()
FROM docket_failed_jobs WHERE $1 = '' OR queue = $1 ORDER BY completed_at DESC, id DESC LIMIT $2`

const healthDepthSQL = `SELECT queue, tenant_id, pending, running, oldest_pending_age_seconds, count(*) OVER ()
FROM docket_queue_depth WHERE $1 = '' OR queue = $1
ORDER BY pending DESC, running DESC, queue, tenant_id LIMIT $2`

var _ docket.Monitor = (*Store)(nil)

// HealthGet reads the monitoring views.
func (s *Store) HealthGet(ctx context.Context, params *docket.HealthParams) (*docket.Health, error) {
	q, limit := "", params.HealthLimit()
	if params != nil {
		q = params.Queue
	}
	h := &docket.Health{}
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, s.pool, opts, func(tx pgx.Tx) error {
		var err error
		queuesSQL := healthQueuesSQL
		if params != nil && params.SkipFinished {
			queuesSQL = healthActiveQueuesSQL
		}
		if h.Queues, err = collect(ctx, tx, scanQueueHealth, queuesSQL, q); err != nil {
			return fmt.Errorf("docket_queue_health: %w", err)
		}
		if params == nil || !params.SkipPerformance {
			if h.Performance, err = collect(ctx, tx, scanHourPerformance, healthPerformanceSQL, q); err != nil {
				return fmt.Errorf("docket_processing_performance: %w", err)
			}
		}
		if h.Stuck, h.StuckTotal, err = collectCounted(ctx, tx, scanStuckJob, healthStuckSQL, q, limit); err != nil {
			return fmt.Errorf("docket_stuck_jobs: %w", err)
		}
		if h.Failed, h.FailedTotal, err = collectCounted(ctx, tx, scanFailedJob, healthFailedSQL, q, limit); err != nil {
			return fmt.Errorf("docket_failed_jobs: %w", err)
		}
		if h.Depth, h.DepthTotal, err = collectCounted(ctx, tx, scanTenantDepth, healthDepthSQL, q, limit); err != nil {
			return fmt.Errorf("docket_queue_depth: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read health: %w", docsError(err))
	}
	return h, nil
}

// collect runs a query and scans each row with scan.
func collect[T any](ctx context.Context, tx pgx.Tx, scan func(pgx.CollectableRow) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// counted is a row of a list and the list's total (its last column).
type counted[T any] struct {
	row   T
	total int
}

// collectCounted runs a list query whose last column is count(*) OVER ().
func collectCounted[T any](ctx context.Context, tx pgx.Tx, scan func(pgx.CollectableRow) (T, int, error), sql string, args ...any) ([]T, int, error) {
	rows, err := collect(ctx, tx, func(r pgx.CollectableRow) (counted[T], error) {
		row, total, err := scan(r)
		return counted[T]{row, total}, err
	}, sql, args...)
	if err != nil {
		return nil, 0, err
	}
	out := make([]T, len(rows))
	total := 0
	for i, c := range rows {
		out[i], total = c.row, c.total
	}
	return out, total, nil
}

func scanQueueHealth(r pgx.CollectableRow) (docket.QueueHealth, error) {
	var v docket.QueueHealth
	var avg, maxAge float64
	err := r.Scan(&v.Queue, &v.State, &v.Jobs, &avg, &maxAge)
	v.AvgAge, v.MaxAge = seconds(avg), seconds(maxAge)
	return v, err
}

func scanHourPerformance(r pgx.CollectableRow) (docket.HourPerformance, error) {
	var v docket.HourPerformance
	var avg, p95 *float64
	err := r.Scan(&v.Hour, &v.Queue, &v.Completed, &v.Failed, &avg, &p95, &v.MaxAttempts)
	v.Hour = v.Hour.UTC()
	v.AvgDuration, v.P95Duration = durationPtr(avg), durationPtr(p95)
	return v, err
}

func scanStuckJob(r pgx.CollectableRow) (docket.StuckJob, int, error) {
	var v docket.StuckJob
	var running float64
	var total int
	err := r.Scan(&v.ID, &v.Queue, &v.Kind, &v.TenantID, &v.Attempt, &v.MaxAttempts, &v.WorkerID,
		&v.StartedAt, &v.LeaseExpiresAt, &running, &v.Reason, &total)
	v.Running = seconds(running)
	return v, total, err
}

func scanFailedJob(r pgx.CollectableRow) (docket.FailedJob, int, error) {
	var v docket.FailedJob
	var total int
	err := r.Scan(&v.ID, &v.Queue, &v.Kind, &v.TenantID, &v.Attempt, &v.MaxAttempts, &v.AttemptsExhausted,
		&v.ErrorMessage, &v.CreatedAt, &v.CompletedAt, &total)
	return v, total, err
}

func scanTenantDepth(r pgx.CollectableRow) (docket.TenantDepth, int, error) {
	var v docket.TenantDepth
	var oldest float64
	var total int
	err := r.Scan(&v.Queue, &v.TenantID, &v.Pending, &v.Running, &oldest, &total)
	v.OldestPendingAge = seconds(oldest)
	return v, total, err
}

func durationPtr(s *float64) *time.Duration {
	if s == nil {
		return nil
	}
	d := seconds(*s)
	return &d
}

// HorizonHolder is a session holding back vacuum's horizon; see
// docket.HorizonHolder.
type HorizonHolder = docket.HorizonHolder

const horizonHoldersSQL = `SELECT pid, user_name, application_name, client_addr, state, xid_age,
    transaction_age_seconds, state_age_seconds, xact_start
FROM docket_horizon_holders ORDER BY xact_start, pid LIMIT $1`

// HorizonHolders returns up to limit sessions that hold back vacuum's
// horizon, oldest transaction first: the first names the process to end
// when dead rows pile up (the chaos horizon-pin scenario). A role without
// pg_read_all_stats sees only its own sessions.
func (s *Store) HorizonHolders(ctx context.Context, limit int) ([]HorizonHolder, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: horizon holders: limit %d below 1", docket.ErrInvalid, limit)
	}
	rows, err := s.pool.Query(ctx, horizonHoldersSQL, limit)
	if err != nil {
		return nil, fmt.Errorf("horizon holders: %w", docsError(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (HorizonHolder, error) {
		var h HorizonHolder
		var xact, state float64
		err := r.Scan(&h.PID, &h.User, &h.Application, &h.ClientAddr, &h.State, &h.XIDAge, &xact, &state, &h.TransactionStart)
		h.TransactionAge, h.StateAge = seconds(xact), seconds(state)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("horizon holders: %w", docsError(err))
	}
	return out, nil
}

// seconds converts a view's seconds to a duration; a negative one (clock
// skew between sessions) is 0.
func seconds(s float64) time.Duration {
	return time.Duration(max(s, 0) * float64(time.Second))
}

// NotifyQueueUsage reports the use of PostgreSQL's notification queue by
// the engine's LISTEN/NOTIFY (postgres.Driver.NotifyQueueUsage), for the
// health readers that see the store only.
func (s *Store) NotifyQueueUsage(ctx context.Context) (float64, error) {
	return s.d.NotifyQueueUsage(ctx)
}
