package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

const cancelWaitingSQL = `
UPDATE docket_jobs SET state = ?2, completed_at = ?3, error_message = COALESCE(?4, error_message), updated_at = ?3
WHERE id = ?1
RETURNING ` + jobColumns

// JobCancel cancels (or, with Discard, fails) a job that has not finished,
// and its unfinished children.
// A running job's attempt ends with outcome cancelled; its slot stays
// taken, recorded in docket_slot_holds, until its worker releases it
// (JobSlotRelease) or its lease expires (JobRescue).
func (e *executor) JobCancel(ctx context.Context, p *driver.JobCancelParams) (*driver.Job, error) {
	state, msg := driver.StateCancelled, p.Reason
	if p.Discard {
		state = driver.StateFailed
		if msg == "" {
			msg = "discarded"
		}
	}
	var job *driver.Job
	err := e.write(ctx, func(t *txn) error {
		j, err := getJob(ctx, t.tx, p.ID, p.TenantID)
		if err != nil {
			return err
		}
		if j.State.Finished() {
			return fmt.Errorf("%w: job %d is already %s", driver.ErrConflict, p.ID, j.State)
		}
		job, err = t.cancel(ctx, j, state, msg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cancel job %d: %w", p.ID, err)
	}
	return job, nil
}

// cancel cancels j, which has not finished, after its unfinished children
// (a workflow parent's cancel cascades).
func (t *txn) cancel(ctx context.Context, j *driver.Job, state driver.State, msg string) (*driver.Job, error) {
	if err := t.cancelChildren(ctx, j.ID, state, msg); err != nil {
		return nil, err
	}
	if j.State == driver.StateRunning {
		return t.cancelRunning(ctx, j, state, msg)
	}
	return scanJob(t.queryRow(ctx, cancelWaitingSQL, j.ID, string(state), t.now, nullString(msg)))
}

// holdSlotSQL records that the running attempt of job ?1 keeps its slot
// until its lease's expiry; it runs before the attempt's end clears the
// lease.
const holdSlotSQL = `
INSERT INTO docket_slot_holds (job_id, attempt, lease_token, expires_at)
SELECT id, attempt, lease_token, lease_expires_at FROM docket_jobs WHERE id = ?1 AND state = 'running'`

func (t *txn) cancelRunning(ctx context.Context, j *driver.Job, state driver.State, msg string) (*driver.Job, error) {
	a := &attemptEnd{
		lease: j.Lease(), outcome: driver.OutcomeCancelled, errText: msg,
		state: state, completed: true,
	}
	if msg != "" {
		a.errMsg = &msg
	}
	if a.errText == "" {
		a.errText = "cancelled"
	}
	if _, err := t.exec(ctx, holdSlotSQL, j.ID); err != nil {
		return nil, fmt.Errorf("hold slot of job %d: %w", j.ID, err)
	}
	return t.endAttempt(ctx, a, true)
}
