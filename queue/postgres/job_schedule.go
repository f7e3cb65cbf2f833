package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// scheduleSQL makes up to $1 due scheduled jobs pending and wakes their
// tenants (tenant rows exist: docket_insert_jobs made them). The due bound
// is statement_timestamp() (stable), an Index Cond: with a volatile clock
// a sweep that finds nothing due would walk every scheduled job.
var scheduleSQL = `
WITH due AS (
    SELECT id FROM docket_jobs
    WHERE state = 'scheduled' AND run_at <= statement_timestamp()
    ORDER BY run_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), moved AS (
    UPDATE docket_jobs j SET state = 'pending', updated_at = clock_timestamp()
    FROM due WHERE j.id = due.id AND j.state = 'scheduled'
    RETURNING j.queue, j.tenant_id
), ` + wakeTenantsSQL("moved") + `, notified AS (
    SELECT pg_notify('docket_insert', q.queue) FROM (SELECT DISTINCT queue FROM moved) q
)
SELECT count(*) FROM moved WHERE (SELECT count(*) FROM notified) >= 0`

// repairSQL repairs lost wake-ups: tenants marked idle (has_work false)
// that have a pending job.
//
// The race: an insert marks its tenant claimable with a conditional update
// (has_work = true WHERE NOT has_work), so that inserts for one tenant do
// not serialise on its row. A claim whose snapshot predates the insert's
// commit does not see the new job; finding the tenant empty, it marks it
// idle, while the insert saw has_work still true and skipped its update.
// The job would then wait with its tenant marked idle.
//
// The claim closes that race itself (an advisory lock and a second look
// with a new snapshot; see sql/claim_rewake.sql), so this is a safety
// net, for rows changed by hand or by a future bug: set has_work again on
// idle rows that have a pending job. Rows marked idle in the last 30
// seconds are checked on every sweep (an index on cleared_at keeps that
// cheap); all idle rows at most once a minute per process. A lost wake-up
// would thus cost at most one sweep interval, or a minute.
var (
	repairRecentSQL = repairSQL("t.cleared_at > statement_timestamp() - interval '30 seconds'")
	repairAllSQL    = repairSQL("true")
)

func repairSQL(cond string) string {
	return `
WITH repaired AS (
    UPDATE docket_tenant_queues t SET has_work = true
    WHERE NOT t.has_work AND ` + cond + `
      AND EXISTS (SELECT FROM docket_jobs j
                  WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'pending'
                  ORDER BY j.priority DESC, j.id LIMIT 1 OFFSET 0) -- a probe of the fetch index per row; see sql/claim_rewake.sql
    RETURNING t.queue
)
SELECT count(*) FROM (SELECT pg_notify('docket_insert', q.queue) FROM (SELECT DISTINCT queue FROM repaired) q) n`
}

// fullRepairEvery is how often every idle tenant row is checked.
const fullRepairEvery = time.Minute

// repairClock remembers when this process last checked every idle row.
type repairClock struct {
	mu   sync.Mutex
	last time.Time
}

// due reports whether a full check is due, and if so starts the period.
func (c *repairClock) due(now time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.last) < fullRepairEvery {
		return false
	}
	c.last = now
	return true
}

// JobSchedule makes due scheduled jobs pending and repairs lost wake-ups
// (see repairSQL). It returns how many jobs it moved.
func (e *Executor) JobSchedule(ctx context.Context, params *driver.JobScheduleParams) (int, error) {
	limit := params.Limit
	if limit <= 0 {
		limit = 1000
	}
	var moved int64
	if err := e.db.QueryRow(ctx, scheduleSQL, limit).Scan(&moved); err != nil {
		return 0, fmt.Errorf("schedule jobs: %w", interpretError(err))
	}
	repair := repairRecentSQL
	if e.repair.due(time.Now()) {
		repair = repairAllSQL
	}
	if _, err := e.db.Exec(ctx, repair); err != nil {
		return int(moved), fmt.Errorf("repair wake-ups: %w", interpretError(err))
	}
	return int(moved), nil
}
