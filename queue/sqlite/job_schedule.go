package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

const scheduleSQL = `
UPDATE docket_jobs SET state = 'pending', updated_at = ?1
WHERE id IN (
	SELECT id FROM docket_jobs WHERE state = 'scheduled' AND run_at <= ?1
	ORDER BY run_at LIMIT ?2)
RETURNING queue, tenant_id`

// JobSchedule makes scheduled jobs whose time has come pending, and their
// tenants claimable.
func (e *executor) JobSchedule(ctx context.Context, p *driver.JobScheduleParams) (int, error) {
	n := 0
	err := e.write(ctx, func(t *txn) error {
		rows, err := t.query(ctx, scheduleSQL, t.now, limitOr(p.Limit, 1000))
		if err != nil {
			return err
		}
		defer rows.Close()
		work := make(map[slot]bool)
		for rows.Next() {
			var s slot
			if err := rows.Scan(&s.queue, &s.tenant); err != nil {
				return err
			}
			work[s] = true
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return t.markWork(ctx, work)
	})
	if err != nil {
		return 0, fmt.Errorf("schedule jobs: %w", err)
	}
	return n, nil
}
