package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// rescueSQL ends up to $1 attempts whose lease expired by the database
// clock. The lock (SKIP LOCKED, so a worker finishing or heartbeating the
// job wins) re-checks the expiry on the newest row version: a heartbeat
// that committed after the snapshot keeps its job. A job with attempts left
// goes back to pending with its id (its place in line); the others fail.
// The expiry bound is statement_timestamp() (stable), so that it is an
// Index Cond of the lease index and the scan stops at the first live lease,
// instead of filtering every running job (see deleteFinishedSQL). It also
// frees up to $1 slots that cancelled attempts hold past their lease
// (docket_slot_holds, see cancelSQL), locking the holds SKIP LOCKED as well
// (a worker releasing one wins).
var rescueSQL = `
WITH expired AS (
    SELECT id, worker_id, started_at
    FROM docket_jobs
    WHERE state = 'running' AND lease_expires_at < statement_timestamp()
    ORDER BY lease_expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), rescued AS (
    UPDATE docket_jobs j SET
        state = CASE WHEN j.attempt < j.max_attempts AND NOT j.fail_on_timeout THEN 'pending' ELSE 'failed' END,
        error_message = CASE WHEN j.attempt < j.max_attempts AND NOT j.fail_on_timeout
            THEN j.error_message ELSE 'Processing timed out' END,
        completed_at = CASE WHEN j.attempt < j.max_attempts AND NOT j.fail_on_timeout
            THEN NULL ELSE clock_timestamp() END,
        lease_token = 0,
        lease_expires_at = NULL,
        updated_at = clock_timestamp()
    FROM expired e
    WHERE j.id = e.id
    RETURNING ` + jobCols("j.") + `, e.worker_id AS lost_worker, e.started_at AS lost_started
), holds_expired AS (
    DELETE FROM docket_slot_holds h
    WHERE (h.job_id, h.attempt) IN (
        SELECT job_id, attempt FROM docket_slot_holds
        WHERE expires_at < statement_timestamp()
        ORDER BY expires_at
        LIMIT $1
        FOR UPDATE SKIP LOCKED)
    RETURNING h.job_id
), ended AS (
    SELECT queue, tenant_id, state FROM rescued
    UNION ALL
    SELECT j.queue, j.tenant_id, j.state FROM holds_expired x JOIN docket_jobs j ON j.id = x.job_id
), ` + freeSlotsSQL("ended") + `, attempts AS (
    INSERT INTO docket_job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome, error)
    SELECT id, attempt, lost_worker, lost_started, clock_timestamp(), 'timed_out', 'lease expired'
    FROM rescued
), notified AS (
    SELECT pg_notify('docket_change', q.queue) FROM (SELECT DISTINCT queue FROM rescued) q
    UNION ALL
    SELECT pg_notify('docket_insert', q.queue) FROM (SELECT DISTINCT queue FROM rescued WHERE state = 'pending') q
)
SELECT ` + jobColumns + ` FROM rescued WHERE (SELECT count(*) FROM notified) >= 0 ORDER BY id`

// JobRescue ends up to params.Limit attempts whose lease expired.
func (e *Executor) JobRescue(ctx context.Context, params *driver.JobRescueParams) ([]*driver.Job, error) {
	limit := params.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.db.Query(ctx, rescueSQL, limit)
	if err != nil {
		return nil, fmt.Errorf("rescue jobs: %w", interpretError(err))
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("rescue jobs: %w", interpretError(err))
	}
	return jobs, nil
}
