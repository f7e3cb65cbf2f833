package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// Two range scans of the fetch index, so the cost is the number of jobs
// ahead, not the tenant's backlog.
const (
	aheadHigherSQL = `
SELECT count(*) FROM docket_jobs
WHERE queue = ? AND tenant_id = ? AND state = 'pending' AND priority > ?`
	aheadSameSQL = `
SELECT count(*) FROM docket_jobs
WHERE queue = ? AND tenant_id = ? AND state = 'pending' AND priority = ? AND id < ?`
	pendingAllSQL = `
SELECT count(*) FROM docket_jobs WHERE queue = ? AND tenant_id = ? AND state = 'pending'`
)

// slotStateSQL reads the tenant's running count and limit in the queue,
// and whether the queue or the tenant is paused.
var slotStateSQL = `
SELECT COALESCE((SELECT running FROM docket_tenant_queues WHERE queue = ?1 AND tenant_id = ?2), 0),
	COALESCE((SELECT max_running FROM docket_tenant_queues WHERE queue = ?1 AND tenant_id = ?2), ` +
	limitSQL("?2", "?1") + `),
	EXISTS (SELECT 1 FROM docket_queues WHERE queue = ?1 AND paused_at IS NOT NULL)
		OR EXISTS (SELECT 1 FROM docket_tenant_pauses WHERE tenant_id = ?2)`

// avgDurationSQL averages the run time of the queue's last 100 completions.
const avgDurationSQL = `
SELECT avg(completed_at - started_at) FROM (
	SELECT completed_at, started_at FROM docket_jobs
	WHERE queue = ? AND state = 'completed' AND completed_at IS NOT NULL AND started_at IS NOT NULL
	ORDER BY completed_at DESC LIMIT 100)`

// JobPosition tells where a scheduled or pending job stands.
func (e *executor) JobPosition(ctx context.Context, id int64) (*driver.Position, error) {
	var pos driver.Position
	err := e.read(ctx, func(q querier, _ int64) error {
		j, err := getJob(ctx, q, id, "")
		if err != nil {
			return err
		}
		switch j.State {
		case driver.StatePending:
			var higher, same int
			if err := q.QueryRowContext(ctx, aheadHigherSQL, j.Queue, j.TenantID, j.Priority).Scan(&higher); err != nil {
				return err
			}
			if err := q.QueryRowContext(ctx, aheadSameSQL, j.Queue, j.TenantID, j.Priority, j.ID).Scan(&same); err != nil {
				return err
			}
			pos.Ahead = higher + same
		case driver.StateScheduled:
			if err := q.QueryRowContext(ctx, pendingAllSQL, j.Queue, j.TenantID).Scan(&pos.Ahead); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: job %d is %s", driver.ErrConflict, id, j.State)
		}
		if err := q.QueryRowContext(ctx, slotStateSQL, j.Queue, j.TenantID).Scan(&pos.Running, &pos.Limit, &pos.Paused); err != nil {
			return err
		}
		var avg sql.NullFloat64
		if err := q.QueryRowContext(ctx, avgDurationSQL, j.Queue).Scan(&avg); err != nil {
			return err
		}
		pos.AvgDuration = time.Duration(avg.Float64) * time.Microsecond
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("job %d position: %w", id, err)
	}
	return &pos, nil
}
