package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// EnqueueTx (and RetryTx) published EventInserted on the in-process bus
// before the caller's transaction committed: a transaction that then
// rolled back left subscribers (the feed applies an inserted event without
// reading the store again; ops counts it as enqueued) with a job that
// never existed, and httpapi, which published again after its RetryTx
// committed, announced a retried document's job twice. Now the caller
// publishes after its commit (Client.PublishInserted), and the workers of
// the process are still woken at the insert.
func TestClient_EnqueueTxPublishesAfterCommit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		events, stop := c.Bus().Subscribe(16, nil, queue.EventInserted)
		defer stop()
		ctx := context.Background()
		tx, _, rollback, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.EnqueueTx(ctx, tx, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rollback(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, res.Job.ID); err == nil {
			t.Fatal("the rolled-back job exists")
		}
		select {
		case e := <-events:
			t.Fatalf("EventInserted published for job %d, whose transaction rolled back", e.Job.ID)
		case <-time.After(100 * time.Millisecond):
		}

		// Committed: the worker (polling once a minute) is woken by the
		// insert, and the caller's PublishInserted is the one event.
		ran := make(chan int64, 1)
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			ran <- task.Job.ID
			return nil
		})}}, 1)
		cfg.PollInterval = time.Minute
		startWorker(t, c, cfg)
		time.Sleep(200 * time.Millisecond) // the worker's first poll has found nothing
		tx, commit, _, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err = c.EnqueueTx(ctx, tx, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if err := commit(); err != nil {
			t.Fatal(err)
		}
		c.PublishInserted(res.Job)
		select {
		case id := <-ran:
			if id != res.Job.ID {
				t.Fatalf("ran job %d, want %d", id, res.Job.ID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the committed job did not run before the worker's next poll")
		}
		select {
		case e := <-events:
			if e.Job.ID != res.Job.ID {
				t.Errorf("EventInserted for job %d, want %d", e.Job.ID, res.Job.ID)
			}
		case <-time.After(5 * time.Second):
			t.Error("no EventInserted after PublishInserted")
		}
		select {
		case e := <-events:
			t.Errorf("a second EventInserted, for job %d", e.Job.ID)
		case <-time.After(100 * time.Millisecond):
		}
	})
}
