package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// JobFinish ends attempts in one transaction: the batch costs one commit.
func (e *executor) JobFinish(ctx context.Context, params []*driver.JobFinishParams) ([]error, error) {
	results := make([]error, len(params))
	if len(params) == 0 {
		return results, nil
	}
	err := e.write(ctx, func(t *txn) error {
		freed := make(slotDelta)
		for i, p := range params {
			a, err := finishEnd(p)
			if err != nil {
				return err
			}
			j, err := t.endAttempt(ctx, a, false)
			switch {
			case errors.Is(err, driver.ErrLeaseLost):
				results[i] = err
				continue
			case err != nil:
				return err
			}
			freed.add(j)
		}
		return t.freeSlots(ctx, freed)
	})
	if err != nil {
		return nil, fmt.Errorf("finish jobs: %w", err)
	}
	return results, nil
}

// finishEnd turns a worker's outcome into an attempt end.
func finishEnd(p *driver.JobFinishParams) (*attemptEnd, error) {
	a := &attemptEnd{lease: p.Lease, outcome: p.Outcome, errText: p.Error, workerID: p.WorkerID}
	switch p.Outcome {
	case driver.OutcomeCompleted:
		noError := ""
		a.state, a.completed, a.result, a.errMsg = driver.StateCompleted, true, p.Result, &noError
	case driver.OutcomeFailed:
		a.state, a.completed, a.errMsg = driver.StateFailed, true, &p.Error
	case driver.OutcomeRetry, driver.OutcomeSnoozed:
		// Scheduled after the delay, or pending at once without one.
		a.state, a.runAgain, a.runIn = driver.StatePending, true, p.RetryIn
		if p.RetryIn > 0 {
			a.state = driver.StateScheduled
		}
		if p.Outcome == driver.OutcomeRetry {
			a.errMsg = &p.Error
		} else {
			a.uncount = true
		}
	case driver.OutcomeReleased:
		a.state, a.uncount = driver.StatePending, true
	case driver.OutcomeWaiting:
		// Waiting while children are open (endAttemptSQL), else pending.
		a.state, a.await, a.uncount = driver.StatePending, true, true
	default:
		return nil, fmt.Errorf("%w: finish job %d with outcome %q", driver.ErrInvalid, p.Lease.JobID, p.Outcome)
	}
	return a, nil
}
