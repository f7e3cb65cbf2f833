package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// These methods let an attempt be worked outside the engine's Worker: a
// process that holds a job's Lease by other means (an HTTP dispatch
// endpoint hands one to a remote worker) reports through them, fenced by
// the lease exactly as a Task's writes are. A write whose lease is no
// longer held changes nothing and returns ErrLeaseLost.

// ProgressLease records the stage, percent and message of the attempt
// lease names.
func (c *Client) ProgressLease(ctx context.Context, lease Lease, stage string, percent int, message string) error {
	return c.exec.JobProgress(ctx, &driver.JobProgressParams{Lease: lease, Stage: stage, Percent: percent, Message: message})
}

// FinishLeaseParams says how an attempt worked outside the engine ended.
type FinishLeaseParams struct {
	Lease Lease
	// Outcome is OutcomeCompleted, OutcomeRetry, OutcomeFailed or
	// OutcomeSnoozed.
	Outcome Outcome
	// Result is the completed job's result: a JSON document, or empty
	// for none (anything else is ErrInvalid). Error is the failure's
	// message, stored with NUL bytes and invalid UTF-8 replaced by U+FFFD,
	// as a Task's error is.
	Result json.RawMessage
	Error  string
	// RetryIn delays a retry or a snooze, from the store's now.
	RetryIn time.Duration
	// WorkerID names who worked the attempt, for the attempt's record.
	WorkerID string
}

// FinishLease ends the attempt p.Lease names. Other processes hear of it
// through ListenChanges, as of any change. When the job was cancelled
// meanwhile (ErrLeaseLost), it frees the tenant's slot the attempt held
// until its worker was done.
func (c *Client) FinishLease(ctx context.Context, p *FinishLeaseParams) error {
	switch p.Outcome {
	case OutcomeCompleted, OutcomeRetry, OutcomeFailed, OutcomeSnoozed:
	default:
		return fmt.Errorf("%w: outcome %q: want completed, retry, failed or snoozed", ErrInvalid, p.Outcome)
	}
	if !validResult(p.Result) {
		return fmt.Errorf("%w: finish job %d: the result is not a JSON document", ErrInvalid, p.Lease.JobID)
	}
	errs, err := c.exec.JobFinish(ctx, []*driver.JobFinishParams{{
		Lease: p.Lease, Outcome: p.Outcome, Result: p.Result, Error: storableText(p.Error),
		RetryIn: p.RetryIn, WorkerID: p.WorkerID,
	}})
	if err != nil {
		return fmt.Errorf("finish job %d: %w", p.Lease.JobID, err)
	}
	if errs[0] != nil {
		if isLeaseLost(errs[0]) {
			if _, rerr := c.exec.JobSlotRelease(ctx, []Lease{p.Lease}); rerr != nil {
				return fmt.Errorf("finish job %d: %w (and freeing its slot: %w)", p.Lease.JobID, errs[0], rerr)
			}
		}
		return fmt.Errorf("finish job %d: %w", p.Lease.JobID, errs[0])
	}
	return nil
}
