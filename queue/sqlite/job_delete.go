package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

const deleteFinishedSQL = `
DELETE FROM docket_jobs WHERE id IN (
	SELECT id FROM docket_jobs WHERE state = ? AND completed_at < ?
	AND id NOT IN (SELECT job_id FROM docket_slot_holds) LIMIT ?)`

// JobDeleteFinished deletes finished jobs older than their retention, and
// their attempt records with them.
func (e *executor) JobDeleteFinished(ctx context.Context, p *driver.JobDeleteFinishedParams) (int, error) {
	ages := []struct {
		state driver.State
		age   time.Duration
	}{
		{driver.StateCompleted, p.CompletedAge},
		{driver.StateFailed, p.FailedAge},
		{driver.StateCancelled, p.CancelledAge},
	}
	left := limitOr(p.Limit, 10000)
	deleted := 0
	err := e.write(ctx, func(t *txn) error {
		for _, a := range ages {
			if left <= 0 {
				break
			}
			res, err := t.exec(ctx, deleteFinishedSQL, string(a.state), t.now-a.age.Microseconds(), left)
			if err != nil {
				return fmt.Errorf("%s jobs: %w", a.state, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			deleted += int(n)
			left -= int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete finished jobs: %w", err)
	}
	return deleted, nil
}

func limitOr(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}
