package queue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/docketq/docket/queue"
)

// noPanic runs fn and turns a panic into an error.
func noPanic(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}

// List and ListTx dereferenced their params: a nil filter, which reads as
// "every job" as a zero JobListParams does, crashed the caller with a nil
// pointer dereference (in the driver). Now nil lists every job (the first
// 100, as the zero value does).
func TestClient_ListNilParams(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "t"})
		var jobs []*queue.Job
		err := noPanic(func() (err error) {
			jobs, err = c.List(ctx, nil)
			return err
		})
		if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID {
			t.Errorf("List(nil) = %d jobs, %v; want job %d", len(jobs), err, job.ID)
		}
		tx, _, rollback, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = rollback() }()
		err = noPanic(func() (err error) {
			jobs, err = c.ListTx(ctx, tx, nil)
			return err
		})
		if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID {
			t.Errorf("ListTx(nil) = %d jobs, %v; want job %d", len(jobs), err, job.ID)
		}
	})
}

// Enqueue(nil) and a nil entry of EnqueueMany crashed the caller with a
// nil pointer dereference; now they are ErrInvalid and nothing is stored.
func TestClient_EnqueueNilParams(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		err := noPanic(func() error { _, err := c.Enqueue(ctx, nil); return err })
		if !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("Enqueue(nil): %v, want ErrInvalid", err)
		}
		err = noPanic(func() error {
			_, err := c.EnqueueMany(ctx, []*queue.EnqueueParams{{Kind: "k", TenantID: "t"}, nil})
			return err
		})
		if !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("EnqueueMany with a nil entry: %v, want ErrInvalid", err)
		}
		if jobs, err := c.List(ctx, &queue.JobListParams{}); err != nil || len(jobs) != 0 {
			t.Errorf("%d jobs stored (%v), want none", len(jobs), err)
		}
	})
}

// SetTenantLimit did not check the queue's name (SetQueueDefaultLimit
// does): SQLite stored a limit for "Documents", a queue that can never
// exist (names are lowercase), and said nothing, so the tenant's real
// queue kept its old limit; PostgreSQL refused it. Now both refuse it with
// ErrInvalid.
func TestClient_SetTenantLimitQueueName(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		if err := c.SetTenantLimit(ctx, "acme", "Documents", 2); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("SetTenantLimit in queue %q: %v, want ErrInvalid", "Documents", err)
		}
		if err := c.SetTenantLimit(ctx, "acme", "documents", 2); err != nil {
			t.Errorf("SetTenantLimit in queue documents: %v", err)
		}
		if err := c.SetTenantLimit(ctx, "acme", "", 2); err != nil {
			t.Errorf("SetTenantLimit in every queue: %v", err)
		}
	})
}
