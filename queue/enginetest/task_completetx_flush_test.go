package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A coalesced progress write whose timer fires while the handler holds its
// own transaction must not stall CompleteTx: on SQLite the flush waits for
// the store's only writer, which the handler's transaction holds, and
// CompleteTx (finalProgress) waited for the flush — until the flush's own
// 5 s timeout, with every other write of the process (heartbeats, claims,
// finishes) behind the open transaction. The bound below is a hang check:
// CompleteTx takes milliseconds, the stall took 5 s.
func TestTask_CompleteTxNotStalledByFlush(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		took := make(chan time.Duration, 1)
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := task.Progress(ctx, "analyze", 90, "a"); err != nil {
				return err
			}
			if err := task.Progress(ctx, "analyze", 95, "b"); err != nil { // coalesced: flushed in 250 ms
				return err
			}
			var start time.Time
			err := s.completeWithEffectThen(ctx, task, func() {
				time.Sleep(400 * time.Millisecond) // the flush fires while the transaction is open
				start = time.Now()
			})
			took <- time.Since(start)
			return err
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		waitState(t, c, job.ID, queue.StateCompleted, 20*time.Second)
		if d := <-took; d > 2*time.Second {
			t.Errorf("CompleteTx took %s: it waited for a progress flush that waits for the handler's own transaction", d.Round(time.Millisecond))
		}
	})
}
