package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A handler that completed its job in its own transaction (CompleteTx,
// committed) and returns nil just after its kind's Timeout passed must be
// reported completed, not as a lost lease.
func TestWorker_TimeoutAfterCompleteTxReportedCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		hooks := newHookLog()
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := s.completeWithEffect(ctx, task); err != nil {
				return err
			}
			<-ctx.Done() // post-commit work that ends with the timeout
			return nil
		})
		// The timeout must come after the commit: database/sql rolls back a
		// transaction whose context ends first, and the attempt is then
		// retried (a loaded CI run took longer than 100 ms to commit on
		// SQLite under -race).
		cfg := fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h, Timeout: time.Second}}, 1)
		cfg.Hooks = hooks.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "t"})
		waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		waitFor(t, 5*time.Second, "Finished hook", func() bool { return len(hooks.outcomes(job.ID)) > 0 })
		if got := hooks.outcomes(job.ID); len(got) != 1 || got[0] != queue.OutcomeCompleted {
			t.Fatalf("Finished hook outcomes %q for a job stored completed (CompleteTx committed), want [completed]", got)
		}
	})
}
