package postgres_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestJobList_Explain checks the plan of a tenant's listing since
// docket_jobs_tenant left running jobs out (migration 014) and pending
// ones (017): the scheduled and finished jobs come from that index, the
// pending ones from docket_jobs_fetch, the running ones from
// docket_jobs_lease, and no part walks the primary key, which would read
// every job of every tenant when the tenant has nothing running.
func TestJobList_Explain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.exec(`INSERT INTO docket_jobs (queue, kind, tenant_id, state, completed_at, lease_token, lease_expires_at)
SELECT 'q', 'k', 't' || (g % 50),
       (ARRAY['completed', 'pending', 'running', 'failed'])[1 + g % 4],
       CASE WHEN g % 4 IN (0, 3) THEN now() END,
       CASE WHEN g % 4 = 2 THEN g ELSE 0 END,
       CASE WHEN g % 4 = 2 THEN now() + interval '1 hour' END
FROM generate_series(1, 40000) g`)
	f.exec(`INSERT INTO docket_jobs (queue, kind, tenant_id, state) SELECT 'q', 'k', 'quiet', 'pending' FROM generate_series(1, 20)`)
	// Claim rows, as docket_insert_jobs makes them, and those of many
	// tenants of another queue.
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, max_running)
SELECT DISTINCT queue, tenant_id, 10 FROM docket_jobs
UNION ALL SELECT 'other', 'o' || g, 10 FROM generate_series(1, 20000) g`)
	f.exec(`ANALYZE`)
	cases := []struct {
		name   string
		params driver.JobListParams
		types  string
		call   string
		want   []string
	}{
		{"tenant", driver.JobListParams{TenantID: "quiet", Limit: 10}, "(text, int)", "('quiet', 10)",
			[]string{"docket_jobs_tenant", "docket_jobs_fetch", "docket_jobs_lease", "docket_tenant_queues_tenant"}},
		{"cursor", driver.JobListParams{TenantID: "t7", BeforeID: 30000, Limit: 10}, "(text, bigint, int)", "('t7', 30000, 10)",
			[]string{"docket_jobs_tenant", "docket_jobs_fetch", "docket_jobs_lease"}},
		{"pending", driver.JobListParams{TenantID: "t7", Queue: "q", States: []driver.State{driver.StatePending}}, "(text, text, text[], int)",
			"('t7', 'q', '{pending}', 100)", []string{"docket_jobs_fetch"}},
		{"running", driver.JobListParams{TenantID: "quiet", States: []driver.State{driver.StateRunning}}, "(text, text[], int)",
			"('quiet', '{running}', 100)", []string{"docket_jobs_lease"}},
		{"finished", driver.JobListParams{TenantID: "t7", States: []driver.State{driver.StateCompleted}}, "(text, text[], int)",
			"('t7', '{completed}', 100)", []string{"docket_jobs_tenant"}},
	}
	for _, c := range cases {
		sql, _ := postgres.JobListSQL(&c.params)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				plan := f.explain(mode, "list"+c.types, sql, "list"+c.call)
				for _, index := range c.want {
					if !strings.Contains(plan, " using "+index+" ") && !strings.Contains(plan, " on "+index+" ") {
						t.Errorf("%s plan does not read %s:\n%s", c.name, index, plan)
					}
				}
				if strings.Contains(plan, "docket_jobs_pkey") {
					t.Errorf("%s plan reads the primary key:\n%s", c.name, plan)
				}
			})
		}
	}
}

// TestJobList_PendingBounded: listing a tenant's pending jobs reads a
// page's worth per queue and priority, not the tenant's backlog. The
// tenant floods one priority of one queue with 20,000 jobs, has a few at
// three more priorities and in a second queue, and has half its flood
// claimed and finished (dead entries at the fetch index's oldest end, and
// finished jobs in docket_jobs_tenant); a page of 10 must read at most 11
// rows per queue and priority, and must be the newest 10.
func TestJobList_PendingBounded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var ps []*driver.JobInsertParams
	for i := range 20000 {
		ps = append(ps, job("flood"))
		if i%5000 == 0 {
			for _, prio := range []int{-2, 3, 7} {
				p := job("flood")
				p.Priority = prio
				ps = append(ps, p)
			}
			p := job("flood")
			p.Queue = "other"
			ps = append(ps, p)
		}
	}
	for len(ps) > 0 {
		batch := ps[:min(len(ps), 5000)]
		ps = ps[len(batch):]
		if _, err := f.x.JobInsertMany(f.ctx, batch); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	f.exec(`UPDATE docket_jobs SET state = 'completed', completed_at = now()
WHERE id IN (SELECT id FROM docket_jobs WHERE priority = 0 AND queue = 'q' ORDER BY id LIMIT 10000)`)
	const queues, priorities, limit = 2, 4, 10
	want := f.queryInt(`SELECT count(*) FROM docket_jobs WHERE state = 'pending'`)
	params := driver.JobListParams{TenantID: "flood", States: []driver.State{driver.StatePending}, Limit: limit}
	sql, _ := postgres.JobListSQL(&params)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			plan := f.explainAnalyzeJSON(mode, "pending(text, text[], int)", sql, "pending('flood', '{pending}', 10)")
			if plan.Plan.ActualRows != limit {
				t.Fatalf("listed %d of %d pending jobs, want %d", plan.Plan.ActualRows, want, limit)
			}
			read := 0
			var walk func(n *planNode)
			walk = func(n *planNode) {
				if n.Relation == "docket_jobs" {
					read += (n.ActualRows + n.Removed) * n.ActualLoops
				}
				for _, c := range n.Plans {
					walk(c)
				}
			}
			walk(&plan.Plan)
			// Each (queue, priority) gives a page, each priority probe a
			// row, and each queue's last probe none.
			if bound := queues*priorities*(limit+1) + queues; read > bound {
				t.Errorf("read %d rows of docket_jobs for a page of %d, more than %d", read, limit, bound)
			}
		})
	}
	jobs, err := f.x.JobList(f.ctx, &params)
	if err != nil {
		t.Fatal(err)
	}
	newest := f.queryInt(`SELECT max(id) FROM docket_jobs`)
	if len(jobs) != limit || jobs[0].ID != int64(newest) {
		t.Fatalf("listed %d jobs from %d, want %d from the newest, %d", len(jobs), jobs[0].ID, limit, newest)
	}
}
