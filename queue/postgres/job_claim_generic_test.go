package postgres_test

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestJobClaim_GenericPlans: a worker's claims run their statements on
// generic plans (claimStartSQL), planned once per connection, where
// PostgreSQL plans a prepared statement anew on each of its first five
// runs, and on every run after while the custom plans look cheaper: behind
// 10^6 pending jobs that was every claim, 1.6 ms of planning for 0.6 ms of
// work. pg_prepared_statements counts, per statement of the connection,
// the runs on a generic plan and on a custom one.
func TestJobClaim_GenericPlans(t *testing.T) {
	t.Parallel()
	f := setup(t)
	pool := f.onePool(nil)
	x := postgres.New(pool).Executor()
	f.enqueue(10, "a", "b")
	const rounds = 8
	for i := range rounds {
		jobs := f.claim(x, 2)
		if len(jobs) == 0 {
			t.Fatalf("claim %d took no job", i+1)
		}
		params := make([]*driver.JobFinishParams, len(jobs))
		for j, job := range jobs {
			params[j] = &driver.JobFinishParams{Lease: job.Lease(), Outcome: driver.OutcomeCompleted, WorkerID: "w"}
		}
		errs, err := x.JobFinish(f.ctx, params)
		if err != nil {
			t.Fatalf("finish %d: %v", i+1, err)
		}
		for _, err := range errs {
			if err != nil {
				t.Fatalf("finish %d: %v", i+1, err)
			}
		}
	}
	for name, sql := range map[string]string{"claimSQL": postgres.ClaimSQL, "moreSQL": postgres.MoreSQL} {
		var generic, custom int64
		err := pool.QueryRow(f.ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, sql).
			Scan(&generic, &custom)
		if err != nil {
			t.Fatalf("%s: read its plan counts: %v", name, err)
		}
		if generic != rounds || custom != 0 {
			t.Errorf("%s: %d runs on the generic plan and %d on a custom plan; want %d and 0", name, generic, custom, rounds)
		}
	}
	f.checkCounters()
}
