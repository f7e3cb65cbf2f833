package queue_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// heldExecutor answers the first held claims with no jobs and more set, as
// a PostgreSQL claim does while another transaction holds the row of the
// only tenant with work (another process's claim or finish), and records
// JobClaimParams.WaitTurn of every claim.
type heldExecutor struct {
	driver.Executor
	held  int
	mu    sync.Mutex
	turns []time.Duration
}

func (e *heldExecutor) JobClaim(ctx context.Context, p *driver.JobClaimParams) ([]*queue.Job, bool, error) {
	e.mu.Lock()
	e.turns = append(e.turns, p.WaitTurn)
	n := len(e.turns)
	e.mu.Unlock()
	if n <= e.held {
		return nil, true, nil
	}
	return e.Executor.JobClaim(ctx, p)
}

// runAfterHeldClaims enqueues one job, runs a worker whose poll interval is
// an hour on exec, so that the job can start only through the claims the
// loop makes after short ones, and returns the WaitTurn of each claim made
// until the job started.
func runAfterHeldClaims(t *testing.T, s *store, exec *heldExecutor) []time.Duration {
	t.Helper()
	exec.Executor = s.driver.Executor()
	c := queue.NewClient(&execDriver{Driver: s.driver, exec: exec}, queue.ClientConfig{})
	enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "t"})
	ran := make(chan struct{})
	h := queue.HandlerFunc(func(context.Context, *queue.Task) error {
		close(ran)
		return nil
	})
	cfg := fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1)
	cfg.PollInterval = time.Hour
	cfg.Maintenance.Disabled = true
	_, stop := startWorker(t, c, cfg)
	select {
	case <-ran:
	case <-time.After(time.Minute):
		t.Fatalf("the job did not start within a minute of %d claims that left its tenant untaken (poll: an hour)", exec.held)
	}
	stop()
	exec.mu.Lock()
	defer exec.mu.Unlock()
	return slices.Clone(exec.turns)
}

// A claim that comes back short with tenants left untaken (more) is tried
// again soon, not at the next poll: nothing else would wake the worker, as
// the transaction that held the tenant sends no notification when it ends.
// Before, a lone tenant's jobs waited a whole poll interval (the chaos
// claim-lock scenario's lone tenant under load; chaos/claimlock_test.go).
func TestWorker_ClaimsAgainWhenTenantsWereHeld(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		runAfterHeldClaims(t, s, &heldExecutor{held: 1})
	})
}

// After a claim that found the tenants with work held by other claims, the
// next claim waits its turn (JobClaimParams.WaitTurn) instead of skipping
// what they hold; when that one comes back short as well, the loop backs
// off and the claim after it skips again, so that one slow claim in flight
// cannot make every claim wait. Before, the loser backed off for ten
// cooldowns while its slots sat idle (the fairness benchmark: four workers
// and one flooding tenant).
func TestWorker_WaitsItsTurnAfterHeldTenants(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		turns := runAfterHeldClaims(t, s, &heldExecutor{held: 2})
		if len(turns) < 3 || turns[0] != 0 || turns[1] <= 0 || turns[2] != 0 {
			t.Fatalf("WaitTurn of the claims: %v; want 0, then a wait, then 0", turns)
		}
	})
}
