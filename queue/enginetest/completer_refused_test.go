package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// One attempt's outcome that a store cannot take must not stop the worker
// from storing every other outcome: the completer retried its whole batch,
// the bad outcome included, for as long as the worker ran, and every job
// the worker finished afterwards stayed running. A result that is not JSON
// now fails its attempt before the store sees it, an error text has its
// NUL bytes replaced, and an outcome the store still refuses (PostgreSQL's
// jsonb refuses \u0000, which is valid JSON) is stored alone, as a
// failure (completer.isolate). Either way the bad job ends too.
func TestCompleter_RefusedOutcomeDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	cases := map[string]queue.HandlerFunc{
		"ResultNotJSON": func(_ context.Context, task *queue.Task) error {
			task.SetResult(json.RawMessage(`{"rows": 3`)) // truncated
			return nil
		},
		"NULInError": func(context.Context, *queue.Task) error {
			return queue.Permanent(errors.New("bad record: \x00\x01 \xff"))
		},
		"ResultStoreRefuses": func(_ context.Context, task *queue.Task) error {
			task.SetResult(json.RawMessage(`{"text": "a\u0000b"}`))
			return nil
		},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, s *store) {
				c := queue.NewClient(s.driver, queue.ClientConfig{})
				var badDone atomic.Bool
				handlers := map[string]queue.HandlerConfig{
					"bad": {Handler: queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
						defer badDone.Store(true)
						return bad(ctx, task)
					})},
					"good": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })},
				}
				startWorker(t, c, fastConfig(handlers, 2))
				bad := enqueue(t, c, &queue.EnqueueParams{Kind: "bad", TenantID: "a"})
				waitFor(t, 5*time.Second, "the bad handler to return", badDone.Load)
				good := enqueue(t, c, &queue.EnqueueParams{Kind: "good", TenantID: "b"})
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					j, err := c.Get(context.Background(), good.ID)
					if err != nil {
						t.Fatal(err)
					}
					if j.State == queue.StateCompleted {
						waitFor(t, 5*time.Second, "the bad job to end", func() bool {
							b, err := c.Get(context.Background(), bad.ID)
							return err == nil && b.State != queue.StateRunning
						})
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				j, _ := c.Get(context.Background(), good.ID)
				t.Fatalf("good job still %s 5s after enqueue: its outcome is stuck behind the bad one", j.State)
			})
		})
	}
}
