package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// heartbeatSQL extends, in one statement, the leases still held. A held
// lease is (id, attempt, lease_token) with a non-zero token; see finishSQL.
// $1 ids, $2 attempts, $3 tokens, $4 lease in microseconds.
//
// It is written not to wait for row locks (tenant_lock.go): locked takes
// the jobs' row locks in id order with SKIP LOCKED, re-checking the lease
// on the newest row version, and renewed extends them. PostgreSQL can
// still make such a lock wait: locking a row version whose updater has
// just ended, it follows the update chain and waits for an updater of a
// newer version in progress, whatever the wait policy
// (heap_lock_updated_tuple). A finish waiting for a job this heartbeat
// holds then closes a cycle: TestDeadlock_FinishHeartbeatInsert saw one
// deadlock_detected in a full CI run. JobHeartbeat runs under
// retryDeadlock, as the other statements of a worker do. A job another transaction has locked (a finish, a progress
// write, a rescue or a cancel in flight) is skipped and reported held when
// its lease matched in the statement's snapshot: if that transaction ends
// the lease, the next heartbeat finds it lost; a rescue needs the lease to
// have expired first, which the heartbeat interval keeps from happening.
const heartbeatSQL = `
WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[]) AS l(id, attempt, token)
    WHERE l.token <> 0
), locked AS (
    SELECT j.id
    FROM input l JOIN docket_jobs j ON j.id = l.id AND j.attempt = l.attempt AND j.lease_token = l.token
    ORDER BY j.id
    FOR NO KEY UPDATE OF j SKIP LOCKED
), renewed AS (
    UPDATE docket_jobs j
    SET lease_expires_at = clock_timestamp() + $4::bigint * interval '1 microsecond'
    FROM locked k
    WHERE j.id = k.id
    RETURNING j.id, j.attempt, j.lease_token
)
SELECT id, attempt, lease_token FROM renewed
UNION ALL
SELECT j.id, j.attempt, j.lease_token
FROM input l JOIN docket_jobs j ON j.id = l.id AND j.attempt = l.attempt AND j.lease_token = l.token
WHERE j.id NOT IN (SELECT id FROM locked)`

// JobHeartbeat extends the held leases and returns them.
func (e *Executor) JobHeartbeat(ctx context.Context, params *driver.JobHeartbeatParams) ([]driver.Lease, error) {
	if len(params.Leases) == 0 {
		return nil, nil
	}
	if params.LeaseDuration <= 0 {
		return nil, fmt.Errorf("%w: heartbeat needs LeaseDuration > 0", driver.ErrInvalid)
	}
	ids, attempts, tokens := leaseArrays(params.Leases)
	var held []driver.Lease
	err := e.retryDeadlock(ctx, func() error {
		held = held[:0]
		rows, err := e.db.Query(ctx, heartbeatSQL, ids, attempts, tokens, micros(params.LeaseDuration))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l driver.Lease
			var attempt int32
			if err := rows.Scan(&l.JobID, &attempt, &l.Token); err != nil {
				return err
			}
			l.Attempt = int(attempt)
			held = append(held, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", interpretError(err))
	}
	return held, nil
}

func leaseArrays(leases []driver.Lease) (ids []int64, attempts []int32, tokens []int64) {
	ids, attempts, tokens = make([]int64, len(leases)), make([]int32, len(leases)), make([]int64, len(leases))
	for i, l := range leases {
		ids[i], attempts[i], tokens[i] = l.JobID, int32(l.Attempt), l.Token
	}
	return ids, attempts, tokens
}

// progressSQL stores progress (and the partial result, when $7 is not
// NULL) while the lease is held. JobProgress notifies (notify_post.go).
const progressSQL = `
UPDATE docket_jobs
SET stage = $4, progress = $5, progress_message = $6,
    partial_result = coalesce($7::jsonb, partial_result), updated_at = clock_timestamp()
WHERE id = $1 AND attempt = $2 AND lease_token = $3 AND $3 <> 0
RETURNING queue`

// JobProgress stores a running job's stage, percent and message, and its
// partial result when params carry one.
func (e *Executor) JobProgress(ctx context.Context, params *driver.JobProgressParams) error {
	if params.Percent < 0 || params.Percent > 100 {
		return fmt.Errorf("%w: progress %d outside 0..100", driver.ErrInvalid, params.Percent)
	}
	var partial *string
	if params.PartialResult != nil {
		if err := driver.ValidatePartialResult(params.PartialResult); err != nil {
			return fmt.Errorf("progress of job %d: %w", params.Lease.JobID, err)
		}
		s := string(params.PartialResult)
		partial = &s
	}
	if e.tx != nil && params.TxIdleLimit > 0 {
		// Before the write locks the job's row (see txIdleLimitSQL).
		if _, err := e.db.Exec(ctx, txIdleLimitSQL, max(params.TxIdleLimit.Milliseconds(), 1)); err != nil {
			return fmt.Errorf("progress of job %d: idle limit: %w", params.Lease.JobID, interpretError(err))
		}
	}
	l := params.Lease
	var q string
	err := e.db.QueryRow(ctx, progressSQL, l.JobID, int32(l.Attempt), l.Token, params.Stage, int16(params.Percent), params.Message, partial).Scan(&q)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("progress of job %d attempt %d: %w", l.JobID, l.Attempt, driver.ErrLeaseLost)
	}
	if err == nil {
		err = e.notify(ctx, note{driver.TopicChange, q})
	}
	if err != nil {
		return fmt.Errorf("progress of job %d: %w", l.JobID, interpretError(err))
	}
	return nil
}
