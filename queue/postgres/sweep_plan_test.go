package postgres_test

import (
	"regexp"
	"testing"

	"github.com/docketq/docket/queue/postgres"
)

// TestSweeps_Explain checks that the time bound of each sweep is an Index
// Cond of its partial index, so that a sweep with nothing to do stops at
// once, whatever the number of finished, running or scheduled jobs. A
// volatile clock (clock_timestamp()) turns the bound into a Filter: a
// retention sweep then walked every finished job (3.7 s after a 10^6-job
// drain; docs/benchmarks.md).
func TestSweeps_Explain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.exec(`INSERT INTO docket_jobs (queue, kind, tenant_id, state, completed_at, lease_token, lease_expires_at, run_at)
SELECT 'q', 'k', 't' || (g % 50),
       (ARRAY['completed', 'failed', 'cancelled', 'running', 'scheduled'])[1 + g % 5],
       CASE WHEN g % 5 < 3 THEN now() END,
       CASE WHEN g % 5 = 3 THEN g ELSE 0 END,
       CASE WHEN g % 5 = 3 THEN now() + interval '1 hour' END,
       now() + interval '1 hour'
FROM generate_series(1, 20000) g`)
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work)
SELECT 'q', 't' || g, g < 50 FROM generate_series(0, 9999) g`)
	f.exec(`ANALYZE`)
	cases := []struct {
		name, sql, call, index, column string
	}{
		{"delete", postgres.DeleteFinishedSQL, "sweep(3600000000, 3600000000, 3600000000, 1000)", "docket_jobs_finished", "completed_at"},
		{"rescue", postgres.RescueSQL, "sweep(1000)", "docket_jobs_lease", "lease_expires_at"},
		{"schedule", postgres.ScheduleSQL, "sweep(1000)", "docket_jobs_scheduled", "run_at"},
	}
	params := map[string]string{
		"delete":   "sweep(bigint, bigint, bigint, int)",
		"rescue":   "sweep(int)",
		"schedule": "sweep(int)",
	}
	for _, c := range cases {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				plan := f.explain(mode, params[c.name], c.sql, c.call)
				cond := regexp.MustCompile(`Index Cond: .*\b` + c.column + ` <`)
				filter := regexp.MustCompile(`Filter: .*\b` + c.column + ` <`)
				if !cond.MatchString(plan) || filter.MatchString(plan) {
					t.Errorf("%s plan does not bound %s in an Index Cond of %s:\n%s", c.name, c.column, c.index, plan)
				}
			})
		}
	}
}
