package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// The shutdown's release of handlers that ignore cancellation must leave
// alone an attempt already completed in the handler's own transaction:
// the job is completed in the store, and must not be reported as a lost
// lease (nor its completion dropped).
func TestWorker_ShutdownReleaseAfterCompleteTxReportedCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		committed := make(chan struct{})
		hold := make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := s.completeWithEffect(ctx, task); err != nil {
				return err
			}
			close(committed)
			<-hold // post-commit cleanup that ignores its context
			return nil
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1)
		cfg.ShutdownGrace = 50 * time.Millisecond
		cfg.HeartbeatInterval = 100 * time.Millisecond
		cfg.Hooks = log.hooks()
		_, stop := startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "t"})
		<-committed
		stop()
		close(hold)
		time.Sleep(200 * time.Millisecond) // the handler returns
		waitState(t, c, job.ID, queue.StateCompleted, 5*time.Second)
		if o := log.outcomes(job.ID); len(o) != 1 || o[0] != queue.OutcomeCompleted {
			t.Errorf("Finished calls %q for a job completed in its transaction, want [completed]", o)
		}
	})
}
