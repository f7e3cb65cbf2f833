package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// claimForLease enqueues a job and claims it as a process outside the
// Worker would, returning its lease.
func claimForLease(t *testing.T, s *store, c *queue.Client) queue.Lease {
	t.Helper()
	ctx := context.Background()
	job := enqueue(t, c, &queue.EnqueueParams{Kind: "remote", TenantID: "acme"})
	claimed, _, err := s.driver.Executor().JobClaim(ctx, &driver.JobClaimParams{
		Queue: queue.DefaultQueue, WorkerID: "remote-1", Max: 1, LeaseDuration: time.Minute,
	})
	if err != nil || len(claimed) != 1 || claimed[0].ID != job.ID {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	return claimed[0].Lease()
}

// FinishLease passed a result that is not JSON to the store: SQLite kept
// it, and every JSON view of the job failed from then on (json.Marshal of
// the Job: "invalid character"), while PostgreSQL refused it (ErrInvalid).
// A Task's SetResult fails such an attempt rather than store it. Now
// FinishLease refuses it, on every store, and the attempt is still held.
func TestClient_FinishLeaseResultNotJSON(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		lease := claimForLease(t, s, c)
		err := c.FinishLease(ctx, &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`not json`)})
		got, gerr := c.Get(ctx, lease.JobID)
		if gerr != nil {
			t.Fatal(gerr)
		}
		if !errors.Is(err, queue.ErrInvalid) {
			_, merr := json.Marshal(got)
			t.Fatalf("FinishLease with a result that is not JSON: %v, want ErrInvalid; job %s with result %q (json.Marshal of it: %v)", err, got.State, got.Result, merr)
		}
		if got.State != queue.StateRunning {
			t.Fatalf("job %s after the refused finish, want still running", got.State)
		}
	})
}

// FinishLease stored the failure's message as given: PostgreSQL's text
// refuses a NUL byte, so a remote endpoint's failure report carrying one
// (JSON "\u0000" decodes to it) was refused with ErrInvalid and the attempt
// went on until its timeout, while SQLite stored it. A Task's error text
// has NUL bytes and invalid UTF-8 replaced by U+FFFD; FinishLease now does
// the same.
func TestClient_FinishLeaseErrorTextStored(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		lease := claimForLease(t, s, c)
		err := c.FinishLease(ctx, &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeFailed, Error: "bad byte \x00 in \xff input"})
		if err != nil {
			t.Fatalf("FinishLease failed with a NUL in its message: %v", err)
		}
		got, err := c.Get(ctx, lease.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if want := "bad byte \uFFFD in \uFFFD input"; got.State != queue.StateFailed || got.ErrorMessage != want {
			t.Fatalf("job %s with message %q, want failed with %q", got.State, got.ErrorMessage, want)
		}
	})
}
