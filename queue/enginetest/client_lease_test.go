package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestClient_Lease: an attempt worked outside the engine's Worker reports
// progress and its end through the lease, fenced like a Task's writes.
func TestClient_Lease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "remote", TenantID: "acme"})
		claimed, _, err := s.driver.Executor().JobClaim(ctx, &driver.JobClaimParams{
			Queue: queue.DefaultQueue, WorkerID: "remote-1", Max: 1, LeaseDuration: time.Minute,
		})
		if err != nil || len(claimed) != 1 || claimed[0].ID != job.ID {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		lease := claimed[0].Lease()
		if err := c.ProgressLease(ctx, lease, "parsing", 40, "page 2"); err != nil {
			t.Fatalf("ProgressLease: %v", err)
		}
		got, err := c.Get(ctx, job.ID)
		if err != nil || got.Stage != "parsing" || got.Progress != 40 {
			t.Fatalf("after progress: %+v, %v", got, err)
		}
		stale := lease
		stale.Token++
		if err := c.ProgressLease(ctx, stale, "stolen", 90, ""); !errors.Is(err, queue.ErrLeaseLost) {
			t.Fatalf("ProgressLease with another token: %v, want ErrLeaseLost", err)
		}
		bad := &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeReleased}
		if err := c.FinishLease(ctx, bad); !errors.Is(err, queue.ErrInvalid) {
			t.Fatalf("FinishLease released: %v, want ErrInvalid", err)
		}
		done := &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeCompleted, Result: []byte(`"done"`), WorkerID: "remote-1"}
		if err := c.FinishLease(ctx, done); err != nil {
			t.Fatalf("FinishLease: %v", err)
		}
		if err := c.FinishLease(ctx, done); !errors.Is(err, queue.ErrLeaseLost) {
			t.Fatalf("FinishLease twice: %v, want ErrLeaseLost", err)
		}
		got, err = c.Get(ctx, job.ID)
		if err != nil || got.State != queue.StateCompleted || string(got.Result) != `"done"` {
			t.Fatalf("after finish: %+v, %v", got, err)
		}
	})
}
