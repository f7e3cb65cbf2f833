package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue"
)

// timedOutMessage is the error of a job the rescue sweep fails.
const timedOutMessage = "Processing timed out"

const sqlExpiredLeases = `
SELECT id, attempt, lease_token, max_attempts, fail_on_timeout FROM docket_jobs
WHERE state = 'running' AND lease_expires_at < ?
ORDER BY lease_expires_at
LIMIT ?`

type expiredLease struct {
	lease         queue.Lease
	maxAttempts   int
	failOnTimeout bool
}

// JobRescue ends attempts whose lease expired by the store's clock.
func (e *executor) JobRescue(ctx context.Context, p *queue.JobRescueParams) ([]*queue.Job, error) {
	var jobs []*queue.Job
	err := e.write(ctx, func(t *txn) error {
		expired, err := t.expiredLeases(ctx, limitOr(p.Limit, 1000))
		if err != nil {
			return err
		}
		freed := make(slotDelta)
		for _, x := range expired {
			a := &attemptEnd{lease: x.lease, outcome: queue.OutcomeTimedOut, errText: "lease expired", state: queue.StatePending}
			if x.lease.Attempt >= x.maxAttempts || x.failOnTimeout {
				msg := timedOutMessage
				a.state, a.completed, a.errMsg = queue.StateFailed, true, &msg
			}
			j, err := t.endAttempt(ctx, a, true)
			if err != nil {
				return err // the lease was read in this transaction: it is held
			}
			freed.add(j)
			jobs = append(jobs, j)
		}
		return t.freeSlots(ctx, freed)
	})
	if err != nil {
		return nil, fmt.Errorf("rescue jobs: %w", err)
	}
	return jobs, nil
}

func (t *txn) expiredLeases(ctx context.Context, limit int) ([]expiredLease, error) {
	rows, err := t.query(ctx, sqlExpiredLeases, t.now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []expiredLease
	for rows.Next() {
		var x expiredLease
		l := &x.lease
		if err := rows.Scan(&l.JobID, &l.Attempt, &l.Token, &x.maxAttempts, &x.failOnTimeout); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

const sqlSchedule = `
UPDATE docket_jobs SET state = 'pending', updated_at = ?1
WHERE id IN (
	SELECT id FROM docket_jobs WHERE state = 'scheduled' AND run_at <= ?1
	ORDER BY run_at LIMIT ?2)
RETURNING queue, tenant_id`

// JobSchedule makes scheduled jobs whose time has come pending, and their
// tenants claimable.
func (e *executor) JobSchedule(ctx context.Context, p *queue.JobScheduleParams) (int, error) {
	n := 0
	err := e.write(ctx, func(t *txn) error {
		rows, err := t.query(ctx, sqlSchedule, t.now, limitOr(p.Limit, 1000))
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

const sqlDeleteFinished = `
DELETE FROM docket_jobs WHERE id IN (
	SELECT id FROM docket_jobs WHERE state = ? AND completed_at < ? LIMIT ?)`

// JobDeleteFinished deletes finished jobs older than their retention, and
// their attempt records with them.
func (e *executor) JobDeleteFinished(ctx context.Context, p *queue.JobDeleteFinishedParams) (int, error) {
	ages := []struct {
		state queue.State
		age   time.Duration
	}{
		{queue.StateCompleted, p.CompletedAge},
		{queue.StateFailed, p.FailedAge},
		{queue.StateCancelled, p.CancelledAge},
	}
	left := limitOr(p.Limit, 10000)
	deleted := 0
	err := e.write(ctx, func(t *txn) error {
		for _, a := range ages {
			if left <= 0 {
				break
			}
			res, err := t.exec(ctx, sqlDeleteFinished, string(a.state), t.now-a.age.Microseconds(), left)
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
