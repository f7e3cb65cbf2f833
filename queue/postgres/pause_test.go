package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestPause_Explain checks the claim's plan with paused tenants and a
// backlog (DOCKET_PLAN_ROWS pending jobs, default 200,000; the figures in
// docs/operations.md are at 10^6): claimable tenants from their index,
// paused ones absent from it, the pause table probed by key, jobs from the
// fetch index; and the claim skips the paused tenants.
func TestPause_Explain(t *testing.T) {
	t.Parallel()
	rows := planRows(t)
	f := setup(t)
	// 2,000 tenants with work, the first 1,000 paused; 100,000 idle ones.
	f.exec(`INSERT INTO docket_jobs (queue, kind, tenant_id, state)
SELECT 'q', 'k', 't' || lpad((g % 2000)::text, 4, '0'), 'pending' FROM generate_series(1, $1) g`, rows)
	f.exec(`INSERT INTO docket_tenant_pauses (tenant_id)
SELECT 't' || lpad(g::text, 4, '0') FROM generate_series(0, 999) g`)
	f.exec(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work)
SELECT 'q', 't' || lpad(g::text, 4, '0'), true FROM generate_series(0, 1999) g`)
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work)
SELECT 'q', 'idle' || g, false FROM generate_series(1, 100000) g`)
	if n := f.queryInt(`SELECT count(*) FROM docket_tenant_queues WHERE paused`); n != 1000 {
		t.Fatalf("%d claim rows paused by the insert trigger, want 1000", n)
	}
	f.exec(`ANALYZE`)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			plan := f.explain(mode, "claim(text, int, bigint, text)", postgres.ClaimSQL, "claim('q', 10, 1000000, 'w')")
			for _, good := range []string{"docket_jobs_fetch", "docket_tenant_queues_claimable", "docket_tenant_pauses_pkey"} {
				if !strings.Contains(plan, good) {
					t.Errorf("claim plan does not use %s:\n%s", good, plan)
				}
			}
			t.Logf("claim plan at %d pending jobs, 1,000 paused tenants:\n%s", rows, plan)
			if strings.Contains(plan, "Seq Scan on docket_tenant_pauses") {
				t.Errorf("claim plan scans the pause table:\n%s", plan)
			}
		})
	}
	for range 3 {
		start := time.Now()
		jobs := f.claim(f.x, 100)
		t.Logf("claimed %d jobs in %v", len(jobs), time.Since(start))
		for _, j := range jobs {
			if j.TenantID < "t1000" {
				t.Fatalf("claimed job %d of paused tenant %s", j.ID, j.TenantID)
			}
		}
	}
}

// TestPause_RowCreatedUnpaused: a claim row that missed its tenant's pause
// (created by an insert whose snapshot predated the pause; made here by
// clearing the flag) is still skipped, through docket_tenant_pauses.
func TestPause_RowCreatedUnpaused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "a", Paused: true}); err != nil {
		t.Fatal(err)
	}
	f.enqueue(2, "a", "b")
	f.exec(`UPDATE docket_tenant_queues SET paused = false WHERE tenant_id = 'a'`)
	for range 2 {
		for _, j := range f.claim(f.x, 10) {
			if j.TenantID == "a" {
				t.Fatalf("claimed job %d of paused tenant a", j.ID)
			}
		}
	}
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "a", Paused: false}); err != nil {
		t.Fatal(err)
	}
	if got := f.claim(f.x, 10); len(got) != 1 || got[0].TenantID != "a" {
		t.Fatalf("claim after resume got %d jobs, want one of a", len(got))
	}
}
