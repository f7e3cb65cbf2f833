package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A handler that calls AwaitEnd after its lease was lost (the loss came
// while it was still handing its work to the other party) got the loss
// reported twice: once by the heartbeat or in-process cancellation
// (activeSet.lose saw no AwaitEnd yet, so it reported), and again by
// finish, which reported for every AwaitEnd task whose context was
// cancelled with ErrLeaseLost, assuming lose had held the report back. Now
// lose records that it held it back (Task.holdLossReport).
func TestWorker_AwaitEndAfterLossReportedOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started, dispatched := make(chan int64, 1), make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started <- task.Job.ID
			<-dispatched // handing the work to the remote party
			task.AwaitEnd()
			<-ctx.Done()
			return context.Cause(ctx)
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"x": {Handler: h}}, 1)
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		enqueue(t, c, &queue.EnqueueParams{Kind: "x", TenantID: "t1"})
		id := <-started
		if _, err := c.Cancel(context.Background(), id, ""); err != nil { // in process: the handler is cancelled at once
			t.Fatalf("Cancel: %v", err)
		}
		waitFor(t, 10*time.Second, "the loss reported", func() bool { return log.losses(id) > 0 })
		close(dispatched)
		waitFor(t, 10*time.Second, "the attempt's end reported", func() bool { return len(log.outcomes(id)) > 0 })
		time.Sleep(200 * time.Millisecond)
		if n := log.losses(id); n != 1 {
			t.Errorf("LeaseLost fired %d times for one lost attempt, want 1", n)
		}
		if o := log.outcomes(id); len(o) != 1 {
			t.Errorf("Finished fired %d times (%v), want 1", len(o), o)
		}
	})
}
