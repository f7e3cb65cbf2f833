package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A lease claimed while heartbeats fail runs a whole lease from its claim:
// the outage cancels it only once that lease has run out, not when the
// leases as last renewed before the outage did. Before, a worker that
// still held an older attempt (a handler deaf to its cancellation, or one
// blocked in a statement cut off with its connection by a network partition)
// cancelled every job it claimed afterwards at the next failed heartbeat,
// with nearly a whole lease left, and each ran again elsewhere once its
// lease expired (the chaos partition's victim: more unfinished executions
// than it held jobs at the fault).
func TestWorker_HeartbeatOutageSparesLaterClaims(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		if !s.driver.Capabilities().MultiProcess {
			t.Skip("a store of one process cancels nothing during an outage (TestWorker_HeartbeatOutageKeepsRenewing)")
		}
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		oldStarted, oldProceed := make(chan struct{}), make(chan struct{})
		old := queue.HandlerFunc(func(context.Context, *queue.Task) error {
			close(oldStarted)
			<-oldProceed // deaf to its cancellation: its attempt stays held
			return nil
		})
		freshStarted, freshProceed := make(chan struct{}), make(chan struct{})
		fresh := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			close(freshStarted)
			select {
			case <-freshProceed:
				return s.completeWithEffect(ctx, task)
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"old": {Handler: old}, "fresh": {Handler: fresh}}, 2)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 3*time.Second, 100*time.Millisecond
		cfg.StuckThreshold = time.Minute
		cfg.Maintenance.Disabled = true // no rescuer: a lease that runs out stays this worker's
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		defer close(oldProceed)

		first := enqueue(t, c, &queue.EnqueueParams{Kind: "old", TenantID: "t"})
		select {
		case <-oldStarted:
		case <-time.After(10 * time.Second):
			t.Fatal("the first job did not start within 10 s")
		}
		fd.exec.refuseHeartbeat.Store(true)
		waitFor(t, 10*time.Second, "the old attempt's lease to run out", func() bool { return log.losses(first.ID) > 0 })

		// Claimed during the outage: its lease runs 3 s from now.
		second := enqueue(t, c, &queue.EnqueueParams{Kind: "fresh", TenantID: "t2"})
		select {
		case <-freshStarted:
		case <-time.After(10 * time.Second):
			t.Fatal("the second job did not start within 10 s")
		}
		time.Sleep(time.Second) // ten failed heartbeats, a third of its lease
		if n := log.losses(second.ID); n != 0 {
			t.Fatalf("%d lease losses reported for a job claimed during the outage, 1 s into its 3 s lease; want 0", n)
		}
		fd.exec.refuseHeartbeat.Store(false)
		close(freshProceed)
		got := waitState(t, c, second.ID, queue.StateCompleted, 10*time.Second)
		if got.Attempt != 1 {
			t.Errorf("the job claimed during the outage completed in attempt %d, want 1", got.Attempt)
		}
	})
}
