package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryPlans guards invariant 7: the statements on the claim, lease and
// sweep paths read indexes, never a scan of the jobs table.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sql string
		args      []any
		want      string // an index the plan must use
	}{
		{"ReadyTenants", readyTenantsSQL, []any{"q", 10}, "docket_tenant_queues_ready"},
		{"ClaimTenantJobs", claimTenantJobsSQL, []any{1, "w", 1, "q", "t", 5}, "docket_jobs_fetch"},
		{"ExpiredLeases", expiredLeasesSQL, []any{1, 10}, "docket_jobs_lease"},
		{"Schedule", scheduleSQL, []any{1, 10}, "docket_jobs_scheduled"},
		{"DeleteFinished", deleteFinishedSQL, []any{"completed", 1, 10}, "docket_jobs_finished"},
		{"AheadSame", aheadSameSQL, []any{"q", "t", 0, 5}, "docket_jobs_fetch"},
		{"AvgDuration", avgDurationSQL, []any{"q"}, "docket_jobs_completed"},
		{"OldestPending", oldestPendingSQL, []any{"q"}, "docket_jobs_queue_state"},
		{"GetUnique", getUniqueSQL, []any{"t", "k"}, "docket_jobs_unique"},
	} {
		plan, err := queryPlan(ctx, d, tc.sql, tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		all := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", tc.name, all)
		if !strings.Contains(all, tc.want) {
			t.Errorf("%s: plan does not use %s:\n%s", tc.name, tc.want, all)
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN docket_jobs") && !strings.Contains(step, "INDEX") {
				t.Errorf("%s: plan scans the jobs table:\n%s", tc.name, all)
			}
		}
	}
}

func queryPlan(ctx context.Context, d *Driver, query string, args []any) ([]string, error) {
	rows, err := d.writer.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}
