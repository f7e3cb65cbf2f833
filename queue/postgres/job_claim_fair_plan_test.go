package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/postgres"
)

// TestFairClaim_Explain reads the plan of the claim at 10^5 claimable
// tenants of spread virtual times, costs and weights, and a backlog
// (DOCKET_PLAN_ROWS pending jobs, default 200,000; docs/claiming.md quotes
// it at 10^6): the tenants come from the claimable index in vtime order,
// as many as the claim takes, and the jobs from the fetch index; nothing
// reads either table whole, so the claim stays flat in the tenants and the
// backlog.
func TestFairClaim_Explain(t *testing.T) {
	t.Parallel()
	rows := planRows(t)
	const tenants = 100_000
	f := setup(t)
	f.exec(`INSERT INTO docket_jobs (queue, kind, tenant_id, state, cost)
SELECT 'q', 'k', 't' || (g % $2), 'pending', 1 + (g % 7) * 50 FROM generate_series(1, $1) g`, rows, tenants)
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work, max_running, weight, vtime)
SELECT 'q', 't' || g, true, 4, 1 + g % 8, (g * 7919 % 100003)::float8 / 7 FROM generate_series(0, $1 - 1) g`, tenants)
	f.exec(`ANALYZE`)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			plan := f.explain(mode, "claim(text, int, bigint, text)", postgres.ClaimSQL, "claim('q', 10, 1000000, 'w')")
			for _, good := range []string{"docket_jobs_fetch", "docket_tenant_queues_claimable"} {
				if !strings.Contains(plan, good) {
					t.Errorf("claim plan does not use %s:\n%s", good, plan)
				}
			}
			for _, bad := range []string{"Seq Scan on docket_jobs", "Seq Scan on docket_tenant_queues"} {
				if strings.Contains(plan, bad) {
					t.Errorf("claim plan has a %s:\n%s", bad, plan)
				}
			}
			var walk func(n *planNode) int
			walk = func(n *planNode) int {
				read := 0
				if n.IndexName == "docket_tenant_queues_claimable" {
					read += n.ActualRows * max(n.ActualLoops, 1)
				}
				for _, c := range n.Plans {
					read += walk(c)
				}
				return read
			}
			p := f.explainAnalyzeJSON(mode, "claimj(text, int, bigint, text)", postgres.ClaimSQL, "claimj('q', 10, 1000000, 'w')")
			if read := walk(&p.Plan); read > 20 {
				t.Errorf("the claim of 10 read %d claimable tenant rows at %d tenants; want about 10", read, tenants)
			}
		})
	}
	// The figures, for the docs: EXPLAIN (ANALYZE, BUFFERS) of one claim,
	// rolled back.
	tx, err := f.d.Pool().BeginTx(f.ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // the claim is undone
	start := time.Now()
	lines, err := pgx.CollectRows(must(tx.Query(f.ctx, "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) "+postgres.ClaimSQL,
		"q", 10, int64(1000000), "w")), pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claim of 10 at %d tenants, %d pending jobs (%v):\n%s", tenants, rows, time.Since(start), strings.Join(lines, "\n"))
}

func must(rows pgx.Rows, err error) pgx.Rows {
	if err != nil {
		panic(err)
	}
	return rows
}
