package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// timedOutMessage is the error of a job the rescue sweep fails.
const timedOutMessage = "Processing timed out"

const expiredLeasesSQL = `
SELECT id, attempt, lease_token, max_attempts, fail_on_timeout FROM docket_jobs
WHERE state = 'running' AND lease_expires_at < ?
ORDER BY lease_expires_at
LIMIT ?`

type expiredLease struct {
	lease         driver.Lease
	maxAttempts   int
	failOnTimeout bool
}

// JobRescue ends attempts whose lease expired by the store's clock, and
// frees the slots cancelled attempts hold past their lease.
func (e *executor) JobRescue(ctx context.Context, p *driver.JobRescueParams) ([]*driver.Job, error) {
	var jobs []*driver.Job
	err := e.write(ctx, func(t *txn) error {
		jobs = nil
		if err := t.freeExpiredHolds(ctx, limitOr(p.Limit, 1000)); err != nil {
			return err
		}
		expired, err := t.expiredLeases(ctx, limitOr(p.Limit, 1000))
		if err != nil {
			return err
		}
		freed := make(slotDelta)
		for _, x := range expired {
			a := &attemptEnd{lease: x.lease, outcome: driver.OutcomeTimedOut, errText: "lease expired", state: driver.StatePending}
			if x.lease.Attempt >= x.maxAttempts || x.failOnTimeout {
				msg := timedOutMessage
				a.state, a.completed, a.errMsg = driver.StateFailed, true, &msg
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
	rows, err := t.query(ctx, expiredLeasesSQL, t.now, limit)
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
