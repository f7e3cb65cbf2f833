package queue_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// Heartbeats that fail until the lease runs out cancel the handler with a
// lost lease, but the lease stays renewed (activeSet.lose: "so a handler
// that finishes anyway before it expires is not wasted"). A handler that
// then returned nil with its result — rather than completing in its own
// transaction — while the store still held its lease had its result
// dropped by finish (the cause says ErrLeaseLost), its entry removed and
// its lease no longer renewed: the job stayed running until its lease
// expired and the rescuer ran it again, an attempt spent, although the
// outcome would have been stored (TestWorker_HeartbeatOutageKeepsRenewing
// shows the same lease accepting CompleteTx). Now finish drops a result
// only when the store said the lease is gone (activeSet.leaseGone).
func TestWorker_OutageThenPlainReturnNotWasted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		if !s.driver.Capabilities().MultiProcess {
			t.Skip("a single-process store cancels nothing during a heartbeat outage")
		}
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		started, proceed := make(chan struct{}), make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			close(started)
			<-proceed // ignores the cancellation: its work is done
			task.SetResult(json.RawMessage(`{"ok":true}`))
			return nil
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 3*time.Second, 100*time.Millisecond
		cfg.StuckThreshold = time.Minute
		cfg.Maintenance.Disabled = true // no rescuer: the lease stays this worker's
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		<-started
		fd.exec.refuseHeartbeat.Store(true)
		waitFor(t, 10*time.Second, "the handler cancelled by the outage", func() bool { return log.losses(job.ID) > 0 })
		fd.exec.refuseHeartbeat.Store(false)
		time.Sleep(500 * time.Millisecond) // heartbeats renew the lease again
		close(proceed)
		waitFor(t, 10*time.Second, "the attempt's end reported", func() bool { return len(log.outcomes(job.ID)) > 0 })
		time.Sleep(300 * time.Millisecond)
		got, err := c.Get(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StateCompleted {
			t.Errorf("job %s after its handler returned nil with its lease still held (hooks: %v); want completed in attempt 1",
				got.State, log.outcomes(job.ID))
		}
	})
}
