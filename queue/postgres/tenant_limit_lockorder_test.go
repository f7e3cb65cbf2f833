package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// TestTenantLimit_RefreshLockOrder: refreshLimitsSQL updates a tenant's
// claim rows in whatever order its scan finds them (physical order), not
// in the (queue, tenant_id) key order every other statement that waits for
// several tenant rows keeps (tenant_lock.go). Tenant a has rows in q2
// (created first) and q1, and an expired job running in each. A claim
// holds a's row in q1 (here: a transaction that locks it). The rescuer
// locks a's jobs, then waits for (q1, a), the first of its rows in key
// order; TenantLimitSet's refresh locks (q2, a), then waits for (q1, a)
// too. When the claim commits, the rescuer gets (q1, a) and waits for
// (q2, a), which the refresh holds while it waits for (q1, a): a deadlock,
// which PostgreSQL breaks by failing one of them (deadlock_detected, not
// retried by either).
func TestTenantLimit_RefreshLockOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, q := range []string{"q2", "q1"} {
		p := &driver.JobInsertParams{Queue: q, Kind: "k", TenantID: "a", Args: json.RawMessage(`{}`), MaxAttempts: 3}
		if _, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p}); err != nil {
			t.Fatal(err)
		}
		jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: q, WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim in %s: %d jobs, %v", q, len(jobs), err)
		}
	}
	f.exec(`UPDATE docket_jobs SET lease_expires_at = now() - interval '1 minute' WHERE state = 'running'`)
	order := f.queryString(`SELECT string_agg(queue, ',') FROM docket_tenant_queues WHERE tenant_id = 'a'`)
	t.Logf("a's rows in scan order: %s", order)

	claim, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Rollback(f.ctx)
	if _, err := claim.Exec(f.ctx, `SELECT FROM docket_tenant_queues WHERE queue = 'q1' AND tenant_id = 'a' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}

	rescued := make(chan error, 1)
	go func() {
		_, err := f.x.JobRescue(f.ctx, &driver.JobRescueParams{Limit: 10})
		rescued <- err
	}()
	f.waitLockWaiters(1)
	limited := make(chan error, 1)
	go func() {
		limited <- f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 3})
	}()
	f.waitLockWaiters(2)
	if err := claim.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-rescued; err != nil {
		t.Errorf("rescue: %v", err)
	}
	if err := <-limited; err != nil {
		t.Errorf("tenant limit: %v", err)
	}
}

// waitLockWaiters polls until n sessions of the database wait for a lock.
func (f *fixture) waitLockWaiters(n int64) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := f.queryInt(`SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%d sessions wait for a lock, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
