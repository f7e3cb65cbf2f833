package postgres_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/postgres"
	"github.com/docketq/docket/queue/driver"
)

// TestJobList_Explain checks the plan of a tenant's listing since
// docket_jobs_tenant left running jobs out (migration 014): the jobs not
// running come from that index, the running ones from docket_jobs_lease,
// and no part walks the primary key, which would read every job of every
// tenant when the tenant has nothing running.
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
	f.exec(`ANALYZE`)
	cases := []struct {
		name   string
		params driver.JobListParams
		types  string
		call   string
		want   []string
	}{
		{"tenant", driver.JobListParams{TenantID: "quiet", Limit: 10}, "(text, int)", "('quiet', 10)",
			[]string{"docket_jobs_tenant", "docket_jobs_lease"}},
		{"cursor", driver.JobListParams{TenantID: "t7", BeforeID: 30000, Limit: 10}, "(text, bigint, int)", "('t7', 30000, 10)",
			[]string{"docket_jobs_tenant", "docket_jobs_lease"}},
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
