package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A job cancelled through the worker's own client loses its lease just as
// one cancelled by another process: Hooks.LeaseLost fires once.
func TestWorker_InProcessCancelReportsLeaseLost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started := make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		<-started
		if _, err := c.Cancel(context.Background(), job.ID, "t"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the attempt's end", func() bool { return len(log.outcomes(job.ID)) > 0 })
		time.Sleep(200 * time.Millisecond) // several heartbeats
		if n := log.losses(job.ID); n != 1 {
			t.Errorf("LeaseLost fired %d times for a job cancelled in this process (Finished: %q), want 1", n, log.outcomes(job.ID))
		}
	})
}
