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

// JobCancel cancels (or, with Discard, fails) a job that has not finished.
// A running job's attempt ends with outcome cancelled and frees its slot.
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
		switch j.State {
		case driver.StateCompleted, driver.StateFailed, driver.StateCancelled:
			return fmt.Errorf("%w: job %d is already %s", driver.ErrConflict, p.ID, j.State)
		case driver.StateRunning:
			job, err = t.cancelRunning(ctx, j, state, msg)
			return err
		}
		job, err = scanJob(t.queryRow(ctx, cancelWaitingSQL, p.ID, string(state), t.now, nullString(msg)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cancel job %d: %w", p.ID, err)
	}
	return job, nil
}

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
	ended, err := t.endAttempt(ctx, a, true)
	if err != nil {
		return nil, err
	}
	freed := make(slotDelta)
	freed.add(ended)
	return ended, t.freeSlots(ctx, freed)
}
