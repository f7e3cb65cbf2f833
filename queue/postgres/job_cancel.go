package postgres

// cancelSQL cancels (or, with $3, fails) a job that is not finished, in one
// statement. $1 id, $2 tenant (” for any), $3 discard, $4 reason. It
// returns the job, and whether it changed; no row means no such job. A
// running job gets an attempt record and keeps its tenant's slot, recorded
// in docket_slot_holds until its worker releases it (slotReleaseSQL) or
// its lease expires (rescueSQL); its workers hear of the cancel on
// docket_cancel. A child's cancel counts down its parent's open children
// (repeatable/workflow.sql); JobCancel cancels a parent's children.
var cancelSQL = `
WITH target AS (
    SELECT id, state, attempt, worker_id, started_at, queue, tenant_id, lease_token, lease_expires_at
    FROM docket_jobs
    WHERE id = $1 AND ($2 = '' OR tenant_id = $2)
    FOR UPDATE
), cancelled AS (
    UPDATE docket_jobs j SET
        state = CASE WHEN $3 THEN 'failed' ELSE 'cancelled' END,
        error_message = CASE WHEN $4 <> '' THEN $4 WHEN $3 THEN 'discarded' ELSE j.error_message END,
        completed_at = clock_timestamp(),
        lease_token = 0,
        lease_expires_at = NULL,
        updated_at = clock_timestamp()
    FROM target t
    WHERE j.id = t.id AND t.state IN ('scheduled', 'pending', 'running', 'waiting')
    RETURNING ` + jobCols("j.") + `
), held AS (
    INSERT INTO docket_slot_holds (job_id, attempt, lease_token, expires_at)
    SELECT t.id, t.attempt, t.lease_token, t.lease_expires_at
    FROM target t
    WHERE t.state = 'running' AND EXISTS (SELECT FROM cancelled)
), attempts AS (
    INSERT INTO docket_job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome, error)
    SELECT t.id, t.attempt, t.worker_id, t.started_at, clock_timestamp(), 'cancelled',
           CASE WHEN $4 <> '' THEN $4 WHEN $3 THEN 'discarded' ELSE 'cancelled' END
    FROM target t
    WHERE t.state = 'running' AND EXISTS (SELECT FROM cancelled)
), notified AS (
    SELECT pg_notify('docket_change', queue) FROM cancelled
    UNION ALL
    SELECT pg_notify('docket_cancel', t.id::text) FROM target t
    WHERE t.state = 'running' AND EXISTS (SELECT FROM cancelled)
)
SELECT true, ` + jobColumns + ` FROM cancelled WHERE (SELECT count(*) FROM notified) >= 0
UNION ALL
SELECT false, ` + jobCols("d.") + `
FROM docket_jobs d JOIN target t ON d.id = t.id
WHERE NOT EXISTS (SELECT FROM cancelled)`
