package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// attemptEnd is how one attempt ends: the record it leaves and the job's
// next state. JobFinish, JobRescue and JobCancel all end attempts with it.
type attemptEnd struct {
	lease    driver.Lease
	outcome  driver.Outcome
	errText  string // the attempt record's error
	workerID string // the record's worker; empty: the job's

	state     driver.State
	await     bool // waiting instead of state while children are open (OutcomeWaiting)
	uncount   bool // Attempt-1: the attempt is not spent
	runAgain  bool // run_at = now + max(runIn, 0)
	runIn     time.Duration
	completed bool    // CompletedAt = now
	errMsg    *string // new ErrorMessage; nil keeps it
	result    []byte  // Result of a completed job
}

// recordAttemptSQL writes the attempt record, only while the lease is held;
// it is the lease check of every attempt end.
const recordAttemptSQL = `
INSERT INTO docket_job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome, error)
SELECT id, attempt, COALESCE(NULLIF(?4, ''), worker_id), COALESCE(started_at, ?5), ?5, ?6, ?7
FROM docket_jobs WHERE ` + leaseHeld

// endAttemptSQL moves the job on and clears its lease. It runs right after
// recordAttemptSQL matched, in the same transaction. endAttemptJobSQL
// returns the whole job; endAttemptSlotSQL only what frees the slot.
const (
	endAttemptSQL = `
UPDATE docket_jobs SET
	state = CASE WHEN ?9 AND children_open > 0 THEN 'waiting' ELSE ?2 END, attempt = attempt - ?3, run_at = COALESCE(?4, run_at), completed_at = ?5,
	error_message = COALESCE(?6, error_message), result = COALESCE(?7, result),
	progress = CASE WHEN ?2 = 'completed' THEN 100 ELSE progress END,
	lease_token = 0, lease_expires_at = NULL, updated_at = ?8
WHERE id = ?1
RETURNING `
	endAttemptJobSQL  = endAttemptSQL + jobColumns
	endAttemptSlotSQL = endAttemptSQL + `id, queue, tenant_id, state`
)

// endAttempt ends the attempt a.lease names and returns the job as it is
// now, or ErrLeaseLost. With full false the job has only ID, Queue,
// TenantID and State. It does not free the tenant's slot: the caller adds
// the job to a slotDelta.
func (t *txn) endAttempt(ctx context.Context, a *attemptEnd, full bool) (*driver.Job, error) {
	l := a.lease
	res, err := t.exec(ctx, recordAttemptSQL, l.JobID, l.Attempt, l.Token, a.workerID, t.now, string(a.outcome), a.errText)
	if err != nil {
		return nil, fmt.Errorf("record attempt of job %d: %w", l.JobID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, errors.Join(leaseLost(l), err)
	}
	var runAt, completedAt sql.NullInt64
	if a.runAgain {
		runAt = sql.NullInt64{Int64: t.now + max(a.runIn, 0).Microseconds(), Valid: true}
	}
	if a.completed {
		completedAt = sql.NullInt64{Int64: t.now, Valid: true}
	}
	var errMsg sql.NullString
	if a.errMsg != nil {
		errMsg = sql.NullString{String: *a.errMsg, Valid: true}
	}
	uncount := 0
	if a.uncount {
		uncount = 1
	}
	args := []any{l.JobID, string(a.state), uncount, runAt, completedAt, errMsg, jsonText(a.result), t.now, a.await}
	var j *driver.Job
	if full {
		j, err = scanJob(t.queryRow(ctx, endAttemptJobSQL, args...))
	} else {
		j = &driver.Job{}
		err = t.queryRow(ctx, endAttemptSlotSQL, args...).Scan(&j.ID, &j.Queue, &j.TenantID, &j.State)
	}
	if err != nil {
		return nil, fmt.Errorf("end attempt of job %d: %w", l.JobID, err)
	}
	return j, nil
}

// slotDelta collects the slots that attempt ends free, per tenant and
// queue, and whether they left pending jobs behind.
type slotDelta map[slot]*slotChange

type slotChange struct {
	freed   int
	hasWork bool
}

func (s slotDelta) add(j *driver.Job) {
	k := slot{j.Queue, j.TenantID}
	c := s[k]
	if c == nil {
		c = &slotChange{}
		s[k] = c
	}
	c.freed++
	c.hasWork = c.hasWork || j.State == driver.StatePending
}

const freeSlotsSQL = `
UPDATE docket_tenant_queues SET running = running - ?1, has_work = has_work | ?2
WHERE queue = ?3 AND tenant_id = ?4`

// freeSlots releases the collected slots, in the same transaction as the
// attempt ends that freed them.
func (t *txn) freeSlots(ctx context.Context, s slotDelta) error {
	for k, c := range s {
		if _, err := t.exec(ctx, freeSlotsSQL, c.freed, c.hasWork, k.queue, k.tenant); err != nil {
			return fmt.Errorf("free slots of tenant %s: %w", k.tenant, err)
		}
	}
	return nil
}
