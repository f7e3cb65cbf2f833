package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// An enqueue outside a transaction woke this process's claim loops only
// through the event bus: the worker's listener (a buffer of 256) got an
// EventInserted per job, and Publish drops what does not fit. A batch of
// more jobs than that (or a burst of enqueues) dropped the wake-ups of the
// last ones, so on SQLite, which has no notifier, a job of another queue
// waited for the worker's next poll (here a minute). Now the client wakes
// the claim loops of each queue it inserted into directly, as EnqueueTx
// does, and the events are for subscribers only.
func TestClient_EnqueueManyBurstWakesEveryQueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		ran := make(chan int64, 1)
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			ran <- task.Job.ID
			return nil
		})}}, 1)
		cfg.Queues = map[string]queue.QueueConfig{"bulk": {MaxWorkers: 1}, "urgent": {MaxWorkers: 1}}
		cfg.PollInterval = time.Minute
		startWorker(t, c, cfg)
		time.Sleep(200 * time.Millisecond) // the worker's first polls have found nothing

		// 2,000 jobs for later in one queue, then one due now in another.
		later := time.Now().Add(time.Hour)
		ps := make([]*queue.EnqueueParams, 0, 2001)
		for range 2000 {
			ps = append(ps, &queue.EnqueueParams{Queue: "bulk", Kind: "work", TenantID: "t", RunAt: later})
		}
		ps = append(ps, &queue.EnqueueParams{Queue: "urgent", Kind: "work", TenantID: "t"})
		res, err := c.EnqueueMany(ctx, ps)
		if err != nil {
			t.Fatal(err)
		}
		want := res[len(res)-1].Job.ID
		select {
		case id := <-ran:
			if id != want {
				t.Fatalf("ran job %d, want %d", id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the urgent job did not run within 10 s (the worker polls once a minute); events dropped: %d", c.Bus().Dropped())
		}
	})
}
