package feed_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
)

// hasPartial matches a change of job id in state that carries the partial
// result want (compared as text: SQLite keeps it as written).
func hasPartial(id int64, state queue.State, want string) func(feed.Change) bool {
	return func(c feed.Change) bool {
		return c.Job.ID == id && c.Job.State == state && string(c.Job.PartialResult) == want
	}
}

// A partial result reaches subscribers as a change of its own, even when
// nothing else of the job changed; later reports without one keep it; a
// new subscriber's snapshot and a resume (Since) read it from the store;
// the completed job keeps it.
func TestFeed_PartialResult(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client})
	sub := subscribe(t, f, "acme")
	step := make(chan struct{})
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		reports := []func() error{
			func() error { return task.Progress(ctx, "parsing", 50, "parsed") },
			func() error {
				return task.ProgressPartial(ctx, "parsing", 50, "parsed", json.RawMessage(`{"pages":2}`))
			},
			func() error { return task.Progress(ctx, "chunking", 60, "") },
		}
		for _, report := range reports {
			if err := report(); err != nil {
				return err
			}
			select {
			case <-step:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	runWorker(t, client, h)
	j := enqueue(t, client, "acme", "a", 0)
	first := next(t, sub, "acme", is(j.ID, queue.StateRunning, "parsing", 50))
	if first.Job.PartialResult != nil {
		t.Fatalf("partial result %s before any was reported", first.Job.PartialResult)
	}
	step <- struct{}{}
	next(t, sub, "acme", hasPartial(j.ID, queue.StateRunning, `{"pages":2}`))
	step <- struct{}{}
	c := next(t, sub, "acme", is(j.ID, queue.StateRunning, "chunking", 60))
	if string(c.Job.PartialResult) != `{"pages":2}` {
		t.Errorf("a report without a partial result dropped it: %s", c.Job.PartialResult)
	}

	late := subscribe(t, runFeed(t, feed.Config{Client: client}), "acme")
	if len(late.Snapshot) != 1 || !hasPartial(j.ID, queue.StateRunning, `{"pages":2}`)(late.Snapshot[0]) {
		t.Errorf("snapshot of another feed %+v: want the running job with its partial result", late.Snapshot)
	}
	changes, err := f.Since(t.Context(), "acme", first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || !hasPartial(j.ID, queue.StateRunning, `{"pages":2}`)(changes[0]) {
		t.Errorf("Since %+v: want the running job with its partial result", changes)
	}

	step <- struct{}{}
	next(t, sub, "acme", hasPartial(j.ID, queue.StateCompleted, `{"pages":2}`))
}
