package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// The lease check every write about a running job makes: this attempt,
// this token, still running.
const leaseHeld = `id = ?1 AND attempt = ?2 AND lease_token = ?3 AND state = 'running'`

const heartbeatSQL = `UPDATE docket_jobs SET lease_expires_at = ?4 WHERE ` + leaseHeld

// JobHeartbeat extends the leases still held, in one transaction.
func (e *executor) JobHeartbeat(ctx context.Context, p *driver.JobHeartbeatParams) ([]driver.Lease, error) {
	if len(p.Leases) == 0 {
		return []driver.Lease{}, nil
	}
	if p.LeaseDuration <= 0 {
		// It would set the leases to expire now, for the next rescue.
		return nil, fmt.Errorf("heartbeat: %w: heartbeat needs LeaseDuration > 0", driver.ErrInvalid)
	}
	var held []driver.Lease
	err := e.write(ctx, func(t *txn) error {
		held = held[:0]
		expires := t.now + p.LeaseDuration.Microseconds()
		for _, l := range p.Leases {
			res, err := t.exec(ctx, heartbeatSQL, l.JobID, l.Attempt, l.Token, expires)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				held = append(held, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	return held, nil
}

const progressSQL = `
UPDATE docket_jobs SET stage = ?4, progress = ?5, progress_message = ?6,
	partial_result = coalesce(?8, partial_result), updated_at = ?7
WHERE ` + leaseHeld

// JobProgress stores a running job's progress, and its partial result when
// p carries one, while its lease is held.
func (e *executor) JobProgress(ctx context.Context, p *driver.JobProgressParams) error {
	if p.Percent < 0 || p.Percent > 100 {
		return fmt.Errorf("progress: %w: percent %d outside 0..100", driver.ErrInvalid, p.Percent)
	}
	var partial any // NULL keeps the stored one
	if p.PartialResult != nil {
		if err := driver.ValidatePartialResult(p.PartialResult); err != nil {
			return fmt.Errorf("progress: %w", err)
		}
		partial = string(p.PartialResult)
	}
	l := p.Lease
	err := e.write(ctx, func(t *txn) error {
		res, err := t.exec(ctx, progressSQL, l.JobID, l.Attempt, l.Token, p.Stage, p.Percent, p.Message, t.now, partial)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return leaseLost(l)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}
