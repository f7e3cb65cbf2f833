package postgres_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// claimMore claims up to max jobs of queue q and returns how many, and
// whether the claim says tenants were left untaken.
func (f *fixture) claimMore(max int) (int, bool) {
	f.t.Helper()
	jobs, more, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: max, LeaseDuration: time.Hour})
	if err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	return len(jobs), more
}

// TestJobClaim_More: a claim reports the claimable tenants with two or more
// pending jobs it left untaken, held by another transaction or beyond its
// size, and only those.
func TestJobClaim_More(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "a")
	if n, more := f.claimMore(10); n != 1 || more {
		t.Fatalf("one tenant, limit 1: claimed %d, more %v; want 1, false", n, more)
	}

	f.enqueue(2, "b")
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	// Another process's claim or finish holds b's row.
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'b' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || !more {
		t.Fatalf("b held: claimed %d, more %v; want 0, true", n, more)
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 1 || more {
		t.Fatalf("b released: claimed %d, more %v; want 1, false", n, more)
	}

	f.enqueue(2, "c", "d")
	if n, more := f.claimMore(1); n != 1 || !more {
		t.Fatalf("two tenants, claim of 1: claimed %d, more %v; want 1, true", n, more)
	}
	if n, more := f.claimMore(1); n != 1 || more {
		t.Fatalf("the other tenant: claimed %d, more %v; want 1, false (c is at its limit)", n, more)
	}

	// One job held with its tenant, as the winner of a thundering herd
	// holds it: the losers are not sent back for it.
	f.enqueue(1, "h")
	tx, err = f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'h' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || more {
		t.Fatalf("h held with one job: claimed %d, more %v; want 0, false", n, more)
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.finishAll(f.x, f.claim(f.x, 10)) // h's job

	// A paused tenant with work is not left "untaken".
	f.enqueue(2, "e")
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "e", Paused: true}); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || more {
		t.Fatalf("only a paused tenant has work: claimed %d, more %v; want 0, false", n, more)
	}
}

// TestJobClaim_MoreBounded: moreSQL looks at a bounded number of tenants.
// Tenants still marked claimable with no pending job left (a claim took
// their last jobs without finding them short) are cleared by claims a
// claim's worth at a time; the probe read every one of them before, 1.1 s
// per claim at 10^5 such tenants (the scale scenario, 10^3 pending jobs).
// The figure read is the rows of the claimable index's scan in EXPLAIN
// ANALYZE: work, not time.
func TestJobClaim_MoreBounded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "busy")
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work, served_at, max_running)
SELECT 'q', 'stale' || g, true, now() - interval '1 hour', 10 FROM generate_series(1, 5000) g`)
	f.exec(`UPDATE docket_tenant_queues SET served_at = now() WHERE tenant_id = 'busy'`) // behind every stale tenant
	f.exec(`ANALYZE`)
	rows, err := f.d.Pool().Query(f.ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+postgres.MoreSQL, "q")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	scan := regexp.MustCompile(`Index Scan using docket_tenant_queues_claimable on docket_tenant_queues tq.*\(actual rows=(\d+) loops=(\d+)\)`).
		FindStringSubmatch(plan)
	if scan == nil {
		t.Fatalf("moreSQL does not scan docket_tenant_queues_claimable:\n%s", plan)
	}
	read, _ := strconv.Atoi(scan[1])
	loops, _ := strconv.Atoi(scan[2])
	if read*loops > postgres.MoreProbeTenants {
		t.Errorf("moreSQL read %d x %d claimable tenants, want at most %d:\n%s", read, loops, postgres.MoreProbeTenants, plan)
	}
}
