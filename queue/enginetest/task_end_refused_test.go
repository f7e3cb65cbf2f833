package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A handler that called AwaitEnd is cancelled by a heartbeat outage
// (lose without gone: the report is held back for its return,
// Task.holdLossReport). Meanwhile the lease is really lost in the store
// (here: discarded by another process). The handler returns without
// EndedBy, so per AwaitEnd's contract the loss must be reported
// (Hooks.LeaseLost). Since finish writes such an outcome (leaseGone is
// false: the store has not said so yet), the report was lost when the
// store refused the write (completer.flush reported Finished("") only);
// the completer now fires the held report.
func TestWorker_AwaitEndHeldLossReportedWhenFinishRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		if !s.driver.Capabilities().MultiProcess {
			t.Skip("a single-process store cancels nothing during a heartbeat outage")
		}
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		other := queue.NewClient(s.driver, queue.ClientConfig{}) // another process: no in-process event
		started, cancelled, proceed := make(chan struct{}), make(chan struct{}), make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			task.AwaitEnd() // the remote party may end the attempt
			close(started)
			<-ctx.Done()
			close(cancelled)
			<-proceed
			return context.Cause(ctx) // the remote party did not end it
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 3*time.Second, 100*time.Millisecond
		cfg.StuckThreshold = time.Minute
		cfg.Maintenance.Disabled = true
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		<-started
		fd.exec.refuseHeartbeat.Store(true) // for good: the worker never hears "gone" from a heartbeat
		select {
		case <-cancelled:
		case <-time.After(15 * time.Second):
			t.Fatal("handler not cancelled by the outage")
		}
		if _, err := other.Discard(context.Background(), job.ID, "by another process"); err != nil {
			t.Fatalf("Discard: %v", err)
		}
		close(proceed)
		waitFor(t, 10*time.Second, "the attempt's end reported", func() bool { return len(log.outcomes(job.ID)) > 0 })
		time.Sleep(300 * time.Millisecond)
		if n := log.losses(job.ID); n != 1 {
			t.Errorf("Hooks.LeaseLost fired %d times for an AwaitEnd attempt whose lease was lost and whose handler returned without EndedBy, want 1 (Finished: %v)",
				n, log.outcomes(job.ID))
		}
	})
}
