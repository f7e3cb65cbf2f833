package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// finishSQL ends a batch of attempts in one statement. Each element of the
// arrays is one param: $1 ids, $2 attempts, $3 tokens, $4 outcomes,
// $5 errors, $6 results, $7 retry delays in microseconds, $8 worker ids.
// It returns the ordinals (from 1) of the params whose lease was held; of
// two params for one job, the first is applied and the second finds the
// lease lost.
//
//   - done: the jobs whose lease matches move by outcome (see
//     driver.Executor.JobFinish) and lose their lease. A waiting outcome
//     reads children_open from the row it updates: when a child's end
//     (the trigger docket_jobs_child_ended, repeatable/workflow.sql)
//     holds the row, the update waits for it and re-evaluates on the
//     version it committed. A held lease is
//     (id, attempt, lease_token) with a non-zero token: the table's CHECK
//     makes a token non-zero exactly while the job runs, and leaving
//     state = 'running' out of the WHERE keeps the planner on the primary
//     key (the partial index of running jobs would otherwise tempt it).
//   - slots_* (and wake_locked, woken): per tenant, the slots freed (see
//     tenant_lock.go: subtracted from the tenant row in finishSQL, recorded
//     for the next claim in finishRecordSQL); a tenant with a job back to
//     pending is claimable again.
//   - attempts: one record per ended attempt, but for the attempt that
//     completes the job: a completed job is final, and its row keeps what
//     that record would (attempt, worker_id, started_at, completed_at),
//     so attemptsSQL reads it from there. Most jobs complete at their
//     first attempt, and the record was a fifth of the WAL of a job's
//     finish (a heap row, an index entry, the sequence).
//   - notified: in a caller's transaction ($9 true), the statement calls
//     pg_notify itself, delivered at that transaction's commit; elsewhere
//     JobFinish sends the notifications after the commit from the queues
//     and states the statement returns (notify_post.go).
//
// In a caller's transaction the idle limit is set before this statement,
// by txIdleLimitSQL: see JobFinish.
var finishSQL = finishStatement(freeSlotsSQL("done"), `notified AS (
    SELECT pg_notify('docket_change', q.queue) FROM (SELECT DISTINCT queue FROM done) q WHERE $9::boolean
    UNION ALL
    SELECT pg_notify('docket_insert', q.queue) FROM (SELECT DISTINCT queue FROM done WHERE state = 'pending') q
    WHERE $9::boolean
)`, " AND (SELECT count(*) FROM notified) >= 0")

// txIdleLimitSQL gives a caller's transaction (CompleteTx) its idle limit
// in ms (driver.JobFinishParams.TxIdleLimit) as its
// idle_in_transaction_session_timeout (SET LOCAL scope: the session keeps
// its own setting afterwards). A transaction idle that long has its
// session terminated by the server, which releases the job rows finishSQL
// locked.
//
// It is a statement of its own, run before finishSQL, and not a CTE of
// finishSQL (as it was) because the limit must be in force before the
// transaction takes any lock of the finish: the server arms it only when
// a round trip ends (ReadyForQuery), and pgx's first use of a statement on
// a connection is two round trips, a prepare then the execution. The
// prepare's parse analysis takes RowExclusiveLock on docket_jobs,
// docket_job_attempts and docket_tenant_queues; a client cut off between
// the two left its session idle in the transaction with those locks and
// no limit, until the client came back or TCP gave up
// (TestJobFinish_TxIdleLimitAnyCut; TestPartition_MidTransaction failed so
// now and then). This statement
// takes no lock, in either round trip, and costs one round trip per
// CompleteTx.
const txIdleLimitSQL = `SELECT set_config('idle_in_transaction_session_timeout', $1::bigint::text, true)`

// finishRecordSQL is finishSQL with the freed slots recorded in
// docket_tenant_freed instead of subtracted from the tenant rows, no idle
// limit and no pg_notify; JobFinish uses it outside a caller's transaction
// (see recordFreedSlotsSQL).
var finishRecordSQL = finishStatement(recordFreedSlotsSQL("done"), "", "")

// finishStatement is the statement with the tenant slots written by slots,
// the CTEs in extra (after the others) and the condition that runs them in
// cond.
func finishStatement(slots, extra, cond string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return `
WITH input AS (
    SELECT DISTINCT ON (id, attempt, token) *
    FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::text[], $5::text[],
                $6::text[], $7::bigint[], $8::text[])
        WITH ORDINALITY AS i(id, attempt, token, outcome, error, result, retry_us, worker_id, ord)
    ORDER BY id, attempt, token, ord
), done AS (
    UPDATE docket_jobs j SET
        state = CASE
            WHEN i.outcome IN ('completed', 'failed') THEN i.outcome
            WHEN i.outcome IN ('retry', 'snoozed') AND i.retry_us > 0 THEN 'scheduled'
            WHEN i.outcome = 'waiting' AND j.children_open > 0 THEN 'waiting'
            ELSE 'pending' END,
        attempt = CASE WHEN i.outcome IN ('snoozed', 'released', 'waiting') THEN j.attempt - 1 ELSE j.attempt END,
        run_at = CASE WHEN i.outcome IN ('retry', 'snoozed')
            THEN clock_timestamp() + greatest(i.retry_us, 0) * interval '1 microsecond'
            ELSE j.run_at END,
        error_message = CASE i.outcome
            WHEN 'completed' THEN '' WHEN 'retry' THEN i.error WHEN 'failed' THEN i.error
            ELSE j.error_message END,
        result = CASE WHEN i.outcome = 'completed' THEN i.result::jsonb ELSE j.result END,
        progress = CASE WHEN i.outcome = 'completed' THEN 100 ELSE j.progress END,
        completed_at = CASE WHEN i.outcome IN ('completed', 'failed') THEN clock_timestamp() END,
        lease_token = 0,
        lease_expires_at = NULL,
        worker_id = CASE WHEN i.outcome = 'completed' THEN coalesce(nullif(i.worker_id, ''), j.worker_id)
            ELSE j.worker_id END,
        updated_at = clock_timestamp()
    FROM input i
    WHERE j.id = i.id AND j.attempt = i.attempt AND j.lease_token = i.token AND i.token <> 0
    RETURNING j.id, j.queue, j.tenant_id, j.state, j.started_at, j.worker_id,
              i.ord, i.attempt AS lease_attempt, i.outcome, i.error, i.worker_id AS by_worker
), ` + slots + `, attempts AS (
    INSERT INTO docket_job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome, error)
    SELECT id, lease_attempt, coalesce(nullif(by_worker, ''), worker_id), started_at, clock_timestamp(),
           outcome, coalesce(error, '')
    FROM done WHERE outcome <> 'completed'
)` + extra + `
SELECT ord, queue, state = 'pending' FROM done WHERE true` + cond
}

// JobFinish ends a batch of attempts in one statement; see finishSQL.
func (e *Executor) JobFinish(ctx context.Context, params []*driver.JobFinishParams) ([]error, error) {
	if len(params) == 0 {
		return nil, nil
	}
	n := len(params)
	var (
		ids, tokens, retryUs       = make([]int64, n), make([]int64, n), make([]int64, n)
		attempts                   = make([]int32, n)
		outcomes, errMsgs, workers = make([]string, n), make([]string, n), make([]string, n)
		results                    = make([]*string, n)
	)
	for i, p := range params {
		switch p.Outcome {
		case driver.OutcomeCompleted, driver.OutcomeRetry, driver.OutcomeFailed, driver.OutcomeSnoozed, driver.OutcomeReleased,
			driver.OutcomeWaiting:
		default:
			return nil, fmt.Errorf("%w: finish job %d with outcome %q", driver.ErrInvalid, p.Lease.JobID, p.Outcome)
		}
		ids[i], attempts[i], tokens[i] = p.Lease.JobID, int32(p.Lease.Attempt), p.Lease.Token
		outcomes[i], errMsgs[i], workers[i], retryUs[i] = string(p.Outcome), p.Error, p.WorkerID, micros(p.RetryIn)
		if len(p.Result) > 0 {
			s := string(p.Result)
			results[i] = &s
		}
	}
	// Inside a caller's transaction (CompleteTx) the tenant rows are updated
	// at once, so the transaction sees exact counters; the worker's batches
	// record the freed slots for the next claim to fold in.
	query, args := finishRecordSQL, []any{ids, attempts, tokens, outcomes, errMsgs, results, retryUs, workers}
	if e.tx != nil {
		var idle time.Duration
		for _, p := range params {
			idle = max(idle, p.TxIdleLimit)
		}
		if idle > 0 {
			if _, err := e.db.Exec(ctx, txIdleLimitSQL, max(idle.Milliseconds(), 1)); err != nil {
				return nil, fmt.Errorf("finish jobs: idle limit: %w", interpretError(err))
			}
		}
		query, args = finishSQL, append(args, e.notifiesInline())
	}
	held := make([]bool, n)
	var changed, pending []string // the queues of the jobs ended, and of those back to pending
	err := e.retryDeadlock(ctx, func() error {
		clear(held)
		changed, pending = changed[:0], pending[:0]
		rows, err := e.db.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				ord   int64
				q     string
				again bool
			)
			if err := rows.Scan(&ord, &q, &again); err != nil {
				return err
			}
			held[ord-1] = true
			changed = append(changed, q)
			if again {
				pending = append(pending, q)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("finish jobs: %w", interpretError(err))
	}
	if !e.notifiesInline() {
		// Not in a caller's transaction: the statement did not notify.
		_ = e.notify(ctx, append(queueNotes(driver.TopicChange, changed...), queueNotes(driver.TopicInsert, pending...)...)...)
	}
	errs := make([]error, n)
	for i, ok := range held {
		if !ok {
			errs[i] = fmt.Errorf("finish job %d attempt %d: %w", ids[i], attempts[i], driver.ErrLeaseLost)
		}
	}
	return errs, nil
}
