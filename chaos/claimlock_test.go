package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

// claimLockPoll is the worker's poll interval in
// TestClaimLockedTenant_WaitsPoll: long, so that a start within it can only
// come from a wake-up.
const claimLockPoll = 3 * time.Second

// TestClaimLockedTenant_WaitsPoll is what made the starvation test's lone tenant slow
// under load (TestTenantStarvation_Smoke at load ~20, 10:16 UTC
// 2026-11-25: tenant A alone at 29 % of the shared rate, its timeline
// gaps of 200-300 ms with no handler running on any of the 24 slots while
// A had over a thousand jobs pending). A claim locks the tenant rows it
// takes with SKIP LOCKED, so while another transaction holds a tenant's
// row (another process's claim, a finish batch) the claim skips that
// tenant; with one tenant it came back empty, and the claim loop waited for
// a wake-up or the poll interval, though the tenant had work. Here: tenant
// A has 20 pending jobs; the test holds A's docket_tenant_queues row while
// one worker (poll 3 s) makes its first claim, then releases it. A's first
// job must start well within the poll interval of the release. Before
// fbf1894 (a claim reports the tenants it left untaken, and the loop looks
// again soon) it started 2.974 s after the release, at the next poll;
// after, 91 ms.
func TestClaimLockedTenant_WaitsPoll(t *testing.T) {
	nightlyOnly(t)
	scheduleLight(t) // schedule_test.go: one worker, 20 jobs; its bound is half a 3 s poll
	if !testing.Short() && cluster.External() {
		t.Skip("needs pg_stat_statements preloaded, as the package's own cluster has it; not with " + pgtest.EnvDatabaseURL)
	}
	e := setup(t)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE EXTENSION pg_stat_statements`); err != nil {
		t.Fatalf("pg_stat_statements: %v", err)
	}
	ids := e.mustEnqueue(ledgerJobs(20, 1, "A", 3, map[string]int{"sleep_ms": 10}))

	// Hold A's tenant row, as a finish batch or another claim would.
	holder, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `SELECT 1 FROM docket_tenant_queues WHERE tenant_id = 'A0' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		t.Fatal(err)
	}
	startFleet(t, 1, false, e.workerArgs("-concurrency", "8", "-poll", claimLockPoll.String(), "-no-maintenance"))
	waitFor(t, 10*time.Second, "the worker's first claim", func() (bool, string) {
		n := e.count(claimCallsSQL)
		return n >= 1, fmt.Sprintf("%d claim statements", n)
	})
	if n := e.count(`SELECT count(*) FROM executions`); n != 0 {
		t.Fatalf("%d executions while A's row was held: the claim took A's jobs", n)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	released := e.dbNow()
	var first time.Time
	waitFor(t, 2*claimLockPoll, "A's first job", func() (bool, string) {
		err := e.pool.QueryRow(ctx, `SELECT min(started_at) FROM executions`).Scan(&first)
		return err == nil, fmt.Sprint(err)
	})
	took := first.Sub(released)
	t.Logf("A's first job started %s after its row was released (poll %s); %d claim statements so far",
		took.Round(time.Millisecond), claimLockPoll, e.count(claimCallsSQL))
	if took > claimLockPoll/2 {
		t.Errorf("A's first job started %s after the release, not before the next poll (%s): the empty claim (A's row locked) was taken for no work",
			took.Round(time.Millisecond), claimLockPoll)
	}
	e.waitDrained(t, len(ids), 20*time.Second)
}
