package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// positionSQL counts the pending jobs of the job's tenant and queue that
// start before it (all of them for a scheduled job), from the fetch index,
// the mean run time of the queue's last 100 completed jobs, and whether
// the job's queue or tenant is paused.
const positionSQL = `
SELECT j.state,
    (SELECT count(*) FROM docket_jobs p
     WHERE p.queue = j.queue AND p.tenant_id = j.tenant_id AND p.state = 'pending'
       AND (j.state = 'scheduled' OR p.priority > j.priority OR (p.priority = j.priority AND p.id < j.id))),
    greatest(coalesce(t.running, 0) - coalesce((SELECT sum(f.n) FROM docket_tenant_freed f
                                                 WHERE f.tenant_id = j.tenant_id AND f.queue = j.queue), 0), 0)::int,
    coalesce(t.max_running, docket_tenant_limit(j.queue, j.tenant_id)),
    coalesce((SELECT extract(epoch FROM avg(c.completed_at - c.started_at))::float8
              FROM (SELECT completed_at, started_at FROM docket_jobs
                    WHERE state = 'completed' AND queue = j.queue AND started_at IS NOT NULL
                    ORDER BY completed_at DESC LIMIT 100) c), 0),
    EXISTS (SELECT FROM docket_queues q WHERE q.name = j.queue AND q.paused_at IS NOT NULL)
        OR EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = j.tenant_id)
FROM docket_jobs j
LEFT JOIN docket_tenant_queues t ON t.queue = j.queue AND t.tenant_id = j.tenant_id
WHERE j.id = $1`

// JobPosition tells where a scheduled or pending job stands.
func (e *Executor) JobPosition(ctx context.Context, id int64) (*driver.Position, error) {
	var state string
	var ahead int64
	var running, limit int32
	var avgSecs float64
	var paused bool
	err := e.db.QueryRow(ctx, positionSQL, id).Scan(&state, &ahead, &running, &limit, &avgSecs, &paused)
	if err != nil {
		return nil, fmt.Errorf("position of job %d: %w", id, interpretError(err))
	}
	if s := driver.State(state); s != driver.StatePending && s != driver.StateScheduled {
		return nil, fmt.Errorf("position of job %d: %w: it is %s", id, driver.ErrConflict, s)
	}
	return &driver.Position{
		Ahead: int(ahead), Running: int(running), Limit: int(limit),
		AvgDuration: time.Duration(avgSecs * float64(time.Second)),
		Paused:      paused,
	}, nil
}
