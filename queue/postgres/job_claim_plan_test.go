package postgres_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/docketq/docket/queue/postgres"
)

// TestJobClaim_PlanLinear: a claim's work grows with the tenants and jobs
// it takes, not with their product. A CTE's rows are unknown to the
// planner, and a join of two CTEs by tenant, or of a CTE to the tenant
// rows, can be planned as a nested loop that reads one CTE once per row of
// the other: tenants x tenants rows. It was, with a fresh table's
// statistics: 13 ms of a 22 ms claim of 100 tenants. The test claims 1,000
// jobs of 100 tenants before any ANALYZE, custom and generic plans, and
// bounds the rows every CTE scan returns over all its loops.
func TestJobClaim_PlanLinear(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const tenants, perTenant, max = 100, 20, 1000
	f.enqueue(perTenant, tenantNames("t", tenants)...)
	f.exec(`UPDATE docket_tenant_queues SET max_running = $1`, max)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			plan := f.explainAnalyzeJSON(mode, "claim(text, int, bigint, text)", postgres.ClaimSQL,
				fmt.Sprintf("claim('q', %d, 1000000, 'w')", max))
			claimed := plan.Plan.ActualRows
			if claimed != max {
				t.Fatalf("claimed %d jobs, want %d", claimed, max)
			}
			bound := 2 * (claimed + tenants)
			var check func(n *planNode)
			check = func(n *planNode) {
				if n.NodeType == "CTE Scan" && n.ActualRows*n.ActualLoops > bound {
					t.Errorf("CTE Scan on %s returned %d rows x %d loops, more than %d: a join planned tenants x tenants",
						n.CTEName, n.ActualRows, n.ActualLoops, bound)
				}
				for _, c := range n.Plans {
					check(c)
				}
			}
			check(&plan.Plan)
		})
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	NodeType    string      `json:"Node Type"`
	CTEName     string      `json:"CTE Name"`
	IndexName   string      `json:"Index Name"`
	Relation    string      `json:"Relation Name"`
	Removed     int         `json:"Rows Removed by Filter"`
	ActualRows  int         `json:"Actual Rows"`
	ActualLoops int         `json:"Actual Loops"`
	Plans       []*planNode `json:"Plans"`
}

// explainAnalyzeJSON prepares sql as name and runs EXPLAIN (ANALYZE,
// FORMAT JSON) of call in plan cache mode mode, in a transaction it rolls
// back.
func (f *fixture) explainAnalyzeJSON(mode, name, sql, call string) struct{ Plan planNode } {
	f.t.Helper()
	conn, err := f.d.Pool().Acquire(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Release()
	stmt, _, _ := strings.Cut(name, "(")
	defer conn.Exec(f.ctx, "ROLLBACK; DEALLOCATE "+stmt) //nolint:errcheck // cleanup: the claim is undone
	if _, err := conn.Exec(f.ctx, "BEGIN; SET LOCAL plan_cache_mode = "+mode+"; PREPARE "+name+" AS "+sql); err != nil {
		f.t.Fatal(err)
	}
	var out []byte
	if err := conn.QueryRow(f.ctx, "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE "+call).Scan(&out); err != nil {
		f.t.Fatalf("explain %s: %v", stmt, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		f.t.Fatalf("explain %s: %v: %s", stmt, err, out)
	}
	return plans[0]
}
