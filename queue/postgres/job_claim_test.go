package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestJobClaim_LimitRace drains tenants with limits 1 and 2 from 16
// claimers in two pools while a monitor reads, in the database itself, how
// many jobs of each tenant run: never more than the limit.
func TestJobClaim_LimitRace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ones, twos := tenantNames("one", 8), tenantNames("two", 8)
	for _, tenant := range twos {
		if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: tenant, Queue: "q", MaxRunning: 2}); err != nil {
			t.Fatal(err)
		}
	}
	const perTenant = 25
	f.enqueue(perTenant, append(ones, twos...)...)
	total := int64(perTenant * (len(ones) + len(twos)))

	execs := []driver.Executor{f.x, f.secondDriver().Executor()}
	var finished atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { f.monitorLimits(done) })
	var claimers sync.WaitGroup
	for w := range 16 {
		claimers.Go(func() {
			x := execs[w%2]
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			deadline := time.Now().Add(60 * time.Second)
			for finished.Load() < total && time.Now().Before(deadline) && !t.Failed() {
				jobs, _, err := x.JobClaim(f.ctx, &driver.JobClaimParams{
					Queue: "q", WorkerID: fmt.Sprint(w), Max: 1 + rng.IntN(4), LeaseDuration: time.Hour})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(jobs) == 0 {
					time.Sleep(time.Millisecond) // polling, as a worker does
					continue
				}
				f.finishAll(x, jobs)
				finished.Add(int64(len(jobs)))
			}
		})
	}
	claimers.Wait()
	close(done)
	wg.Wait()
	if got := finished.Load(); got != total {
		t.Fatalf("finished %d of %d", got, total)
	}
	if n := f.queryInt(`SELECT count(*) FROM docket_jobs WHERE state <> 'completed' OR attempt <> 1`); n != 0 {
		t.Fatalf("%d jobs not completed in exactly one attempt", n)
	}
	f.checkCounters()
}

func (f *fixture) finishAll(x driver.Executor, jobs []*queue.Job) {
	ps := make([]*driver.JobFinishParams, len(jobs))
	for i, j := range jobs {
		ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}
	}
	errs, err := x.JobFinish(f.ctx, ps)
	if err != nil {
		f.t.Errorf("finish: %v", err)
		return
	}
	for i, err := range errs {
		if err != nil {
			f.t.Errorf("finish job %d: %v", jobs[i].ID, err)
		}
	}
}

// monitorLimits checks, until done, that no snapshot of the database shows
// a tenant over its limit.
func (f *fixture) monitorLimits(done <-chan struct{}) {
	checks := 0
	for {
		select {
		case <-done:
			f.t.Logf("%d snapshots checked", checks)
			return
		default:
		}
		var over string
		err := f.d.Pool().QueryRow(f.ctx, `
SELECT coalesce(string_agg(j.tenant_id || ':' || j.n, ' '), '')
FROM (SELECT tenant_id, count(*) AS n FROM docket_jobs WHERE state = 'running' GROUP BY tenant_id) j
WHERE j.n > docket_tenant_limit('q', j.tenant_id)`).Scan(&over)
		if err != nil {
			f.t.Errorf("monitor: %v", err)
			return
		}
		if over != "" {
			f.t.Errorf("tenants over their limit: %s", over)
			return
		}
		checks++
	}
}

// TestJobClaim_FairBehindBacklog: 49 tenants with one job each wait about
// one claim behind a tenant with 2,000 jobs and a limit of 50, not behind
// its backlog.
func TestJobClaim_FairBehindBacklog(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "big", MaxRunning: 50}); err != nil {
		t.Fatal(err)
	}
	f.enqueue(2000, "big")
	small := tenantNames("small", 49)
	f.enqueue(1, small...)
	served := map[string]int{}
	for range 5 {
		for _, j := range f.claim(f.x, 10) {
			served[j.TenantID]++
		}
	}
	for _, tenant := range small {
		if served[tenant] != 1 {
			t.Errorf("tenant %s got %d jobs in the first 5 claims of 10, want 1", tenant, served[tenant])
		}
	}
	if served["big"] > 5 {
		t.Errorf("big got %d jobs while 49 tenants waited, want at most one per claim", served["big"])
	}
	// With the small tenants done, big gets the whole claim.
	if got := f.claim(f.x, 10); len(got) != 10 {
		t.Errorf("claimed %d of big's jobs, want 10", len(got))
	}
	f.checkCounters()
}

// TestJobClaim_Explain checks the plans of the claim and the finish,
// custom and generic (pgx prepares statements), against a backlog and many
// idle tenants: no sequential scan of the jobs or tenant tables; jobs
// claimed from the fetch index.
func TestJobClaim_Explain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(100, tenantNames("t", 200)...)
	f.bulkTenantRows(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work)
SELECT 'q', 'idle' || g, false FROM generate_series(1, 100000) g`)
	f.exec(`ANALYZE`)
	j := f.claim(f.x, 1)[0]
	finish := fmt.Sprintf(`fin('{%d}', '{%d}', '{%d}', '{completed}', '{""}', '{NULL}', '{0}', '{w}', true)`,
		j.ID, j.Attempt, j.LeaseToken)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			claim := f.explain(mode, "claim(text, int, bigint, text)", postgres.ClaimSQL, "claim('q', 10, 1000000, 'w')")
			for _, good := range []string{"docket_jobs_fetch", "docket_tenant_queues_claimable"} {
				if !strings.Contains(claim, good) {
					t.Errorf("claim plan does not use %s:\n%s", good, claim)
				}
			}
			if more := f.explain(mode, "more(text)", postgres.MoreSQL, "more('q')"); !strings.Contains(more, "docket_tenant_queues_claimable") {
				t.Errorf("moreSQL plan does not use docket_tenant_queues_claimable:\n%s", more)
			}
			f.explain(mode, "fin(bigint[], int[], bigint[], text[], text[], text[], bigint[], text[], boolean)",
				postgres.FinishSQL, finish)
		})
	}
}

// explain prepares sql as name, explains executing call in plan cache mode
// mode, fails the test on a sequential scan of a docket table and returns
// the plan.
func (f *fixture) explain(mode, name, sql, call string) string {
	f.t.Helper()
	conn, err := f.d.Pool().Acquire(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Release()
	stmt, _, _ := strings.Cut(name, "(")
	defer conn.Exec(f.ctx, "DEALLOCATE "+stmt+"; RESET plan_cache_mode") //nolint:errcheck // cleanup
	if _, err := conn.Exec(f.ctx, "SET plan_cache_mode = "+mode+"; PREPARE "+name+" AS "+sql); err != nil {
		f.t.Fatal(err)
	}
	rows, err := conn.Query(f.ctx, "EXPLAIN EXECUTE "+call)
	if err != nil {
		f.t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		f.t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	for _, table := range []string{"docket_jobs", "docket_tenant_queues"} {
		if strings.Contains(plan, "Seq Scan on "+table+" ") {
			f.t.Errorf("%s plan (%s) scans %s:\n%s", stmt, mode, table, plan)
		}
	}
	return plan
}

// TestJobClaim_NoLostWakeUp inserts, in transactions held open a moment,
// into a few tenants while claimers drain them, with no schedule sweep: a
// claim that finds a tenant empty while an insert for it commits must not
// leave that job unclaimable.
func TestJobClaim_NoLostWakeUp(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := f.secondDriver().Executor()
	const producers, perProducer = 4, 50
	total := int64(producers * perProducer)
	var finished atomic.Int64
	var wg sync.WaitGroup
	for w := range producers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range perProducer {
				tx, err := other.Begin(f.ctx)
				if err != nil {
					t.Error(err)
					return
				}
				_, err = tx.JobInsertMany(f.ctx, []*driver.JobInsertParams{job(fmt.Sprint("t", (w+i)%3))})
				if err == nil {
					time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond) // the application's own work
					err = tx.Commit(f.ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for range 4 {
		wg.Go(func() {
			for finished.Load() < total && time.Now().Before(deadline) && !t.Failed() {
				jobs := f.claim(f.x, 2)
				if len(jobs) == 0 {
					time.Sleep(200 * time.Microsecond) // polling
					continue
				}
				f.finishAll(f.x, jobs)
				finished.Add(int64(len(jobs)))
			}
		})
	}
	wg.Wait()
	if n := finished.Load(); n != total {
		t.Fatalf("finished %d of %d jobs; %d pending with their tenant marked idle", n, total,
			f.queryInt(`SELECT count(*) FROM docket_jobs j JOIN docket_tenant_queues t USING (queue, tenant_id)
				WHERE j.state = 'pending' AND NOT t.has_work`))
	}
	f.checkCounters()
}
