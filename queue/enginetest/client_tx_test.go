package queue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docketq/docket/queue"
)

// TestClient_ListTx sees the jobs a transaction enqueued before it
// commits; outside it, they appear only after the commit.
func TestClient_ListTx(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		enqueue(t, c, &queue.EnqueueParams{Kind: "other", TenantID: "acme"})
		tx, commit, rollback, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = rollback() }() // a no-op error after the commit
		res, err := c.EnqueueTx(ctx, tx, &queue.EnqueueParams{Kind: "mail", TenantID: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		inTx, err := c.ListTx(ctx, tx, &queue.JobListParams{Kind: "mail"})
		if err != nil {
			t.Fatalf("ListTx: %v", err)
		}
		if len(inTx) != 1 || inTx[0].ID != res.Job.ID {
			t.Fatalf("ListTx = %d jobs, want the one enqueued in the transaction", len(inTx))
		}
		outside, err := c.List(ctx, &queue.JobListParams{Kind: "mail"})
		if err != nil || len(outside) != 0 {
			t.Fatalf("List outside the transaction before commit = %d jobs, %v; want none", len(outside), err)
		}
		if err := commit(); err != nil {
			t.Fatal(err)
		}
		outside, err = c.List(ctx, &queue.JobListParams{Kind: "mail"})
		if err != nil || len(outside) != 1 {
			t.Fatalf("List after commit = %d jobs, %v; want 1", len(outside), err)
		}
		if _, err := c.ListTx(ctx, "not a transaction", &queue.JobListParams{}); !errors.Is(err, queue.ErrInvalid) {
			t.Fatalf("ListTx of a string: %v, want ErrInvalid", err)
		}
	})
}

// TestClient_RetryTxPositionTx: a retry made in a caller's transaction has
// its place in the queue inside that transaction and exists only once it
// commits; a rolled-back one leaves no job.
func TestClient_RetryTxPositionTx(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		ahead := enqueue(t, c, &queue.EnqueueParams{Kind: "mail", TenantID: "acme"})
		failed := enqueue(t, c, &queue.EnqueueParams{Kind: "mail", TenantID: "acme"})
		if _, err := c.Discard(ctx, failed.ID, "broken"); err != nil {
			t.Fatal(err)
		}
		for _, commitIt := range []bool{false, true} {
			tx, commit, rollback, err := s.begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			retried, err := c.RetryTx(ctx, tx, failed.ID, "acme")
			if err != nil {
				t.Fatalf("RetryTx: %v", err)
			}
			pos, err := c.PositionTx(ctx, tx, retried.ID)
			if err != nil || pos.Ahead != 1 {
				t.Fatalf("PositionTx = %+v, %v; want 1 ahead (job %d)", pos, err, ahead.ID)
			}
			if _, err := c.Position(ctx, retried.ID); !errors.Is(err, queue.ErrNotFound) {
				t.Fatalf("Position outside the transaction before commit: %v, want ErrNotFound", err)
			}
			end := rollback
			if commitIt {
				end = commit
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
			_, err = c.Get(ctx, retried.ID)
			if commitIt != (err == nil) {
				t.Fatalf("committed %v: Get of the retry: %v", commitIt, err)
			}
		}
		if _, err := c.PositionTx(ctx, 42, ahead.ID); !errors.Is(err, queue.ErrInvalid) {
			t.Fatalf("PositionTx of an int: %v, want ErrInvalid", err)
		}
	})
}
