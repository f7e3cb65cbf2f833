package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// A second process (here: a second driver on the same database) hears of
// the progress and completion of a job worked elsewhere.
func TestClient_ListenChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	open := func() *queue.Client {
		d, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return queue.NewClient(d, queue.ClientConfig{})
	}
	workerSide, watcherSide := open(), open()

	hints := make(chan string, 100)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- watcherSide.ListenChanges(lctx, func(q string) { hints <- q }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenChanges: %v", err)
		}
	}()

	gate := make(chan struct{})
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		<-gate
		return task.Progress(ctx, "parsing", 40, "")
	})
	startWorker(t, workerSide, fastConfig(map[string]queue.HandlerConfig{"doc": {Handler: h}}, 1))
	// The listener subscribes asynchronously: keep producing changes until
	// one is heard.
	job := enqueue(t, watcherSide, &queue.EnqueueParams{Kind: "doc", TenantID: "a"})
	close(gate)
	waitState(t, watcherSide, job.ID, queue.StateCompleted, 10*time.Second)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case q := <-hints:
			if q != queue.DefaultQueue {
				t.Fatalf("hint for queue %q", q)
			}
			return
		case <-deadline:
			t.Fatal("no change hint reached the other process")
		case <-time.After(100 * time.Millisecond):
			enqueue(t, workerSide, &queue.EnqueueParams{Kind: "doc", TenantID: "b"})
		}
	}
}

// ListenChanges hears inserts too: a job enqueued by another process, with
// no worker anywhere, is news to a watcher.
func TestClient_ListenChangesHearsInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	open := func() *queue.Client {
		d, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return queue.NewClient(d, queue.ClientConfig{})
	}
	producer, watcher := open(), open()
	hints := make(chan string, 100)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- watcher.ListenChanges(lctx, func(q string) { hints <- q }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenChanges: %v", err)
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		// The listener subscribes asynchronously: enqueue until heard.
		enqueue(t, producer, &queue.EnqueueParams{Kind: "doc", Queue: "inbox", TenantID: "a"})
		select {
		case q := <-hints:
			if q != "inbox" {
				t.Fatalf("hint for queue %q, want inbox", q)
			}
			return
		case <-deadline:
			t.Fatal("no hint of an insert reached the other process")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
