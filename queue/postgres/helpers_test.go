package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// fixture is a driver on a fresh database and the test's context.
type fixture struct {
	t   *testing.T
	ctx context.Context
	d   *postgres.Driver
	x   driver.Executor
}

func setup(t *testing.T) *fixture {
	t.Helper()
	d := newDriver(t)
	return &fixture{t: t, ctx: t.Context(), d: d, x: d.Executor()}
}

// secondDriver returns another driver on f's database, with its own pool:
// a second process, as far as PostgreSQL can tell.
func (f *fixture) secondDriver() *postgres.Driver {
	f.t.Helper()
	pool, err := pgxpool.NewWithConfig(f.ctx, f.d.Pool().Config())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(pool.Close)
	return postgres.New(pool)
}

func job(tenant string) *driver.JobInsertParams {
	return &driver.JobInsertParams{Queue: "q", Kind: "k", TenantID: tenant, Args: json.RawMessage(`{}`), MaxAttempts: 3}
}

// enqueue inserts n jobs of each tenant, in batches.
func (f *fixture) enqueue(n int, tenants ...string) {
	f.t.Helper()
	var ps []*driver.JobInsertParams
	for range n {
		for _, tenant := range tenants {
			ps = append(ps, job(tenant))
		}
	}
	for len(ps) > 0 {
		batch := ps[:min(len(ps), 5000)]
		ps = ps[len(batch):]
		if _, err := f.x.JobInsertMany(f.ctx, batch); err != nil {
			f.t.Fatalf("insert: %v", err)
		}
	}
}

func (f *fixture) claim(x driver.Executor, max int) []*queue.Job {
	f.t.Helper()
	jobs, _, err := x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: max, LeaseDuration: time.Hour})
	if err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	return jobs
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.d.Pool().Exec(f.ctx, sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// planRows is the backlog of the plan tests: $DOCKET_PLAN_ROWS pending
// jobs, default 200,000 (docs/claiming.md quotes the plans at 10^6).
func planRows(t *testing.T) int {
	t.Helper()
	s := os.Getenv("DOCKET_PLAN_ROWS")
	if s == "" {
		return 200_000
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("DOCKET_PLAN_ROWS=%q: %v", s, err)
	}
	return n
}

// bulkTenantRows runs sql, an INSERT of many docket_tenant_queues rows, without
// the per-row settings trigger (which reads the tenant's pause and limit for
// each row: half a minute for 10^5 rows under a loaded test run). The rows
// take the column defaults (max_running 1, unpaused) unless sql sets them.
// The table's trigger is off only for the statement, in this test's own
// database.
func (f *fixture) bulkTenantRows(sql string, args ...any) {
	f.t.Helper()
	f.exec(`ALTER TABLE docket_tenant_queues DISABLE TRIGGER docket_tenant_queues_settings`)
	defer f.exec(`ALTER TABLE docket_tenant_queues ENABLE TRIGGER docket_tenant_queues_settings`)
	f.exec(sql, args...)
}

func (f *fixture) queryInt(sql string, args ...any) int64 {
	f.t.Helper()
	var n int64
	if err := f.d.Pool().QueryRow(f.ctx, sql, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (f *fixture) queryString(sql string, args ...any) string {
	f.t.Helper()
	var s string
	if err := f.d.Pool().QueryRow(f.ctx, sql, args...).Scan(&s); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// checkCounters fails t unless every tenant row's running count, less the
// freed slots not yet folded in (docket_tenant_freed), equals its running
// jobs.
func (f *fixture) checkCounters() {
	f.t.Helper()
	rows, err := f.d.Pool().Query(f.ctx, `
SELECT q, tenant, counter, actual FROM (
    SELECT t.queue AS q, t.tenant_id AS tenant,
           t.running - coalesce((SELECT sum(f.n) FROM docket_tenant_freed f
                                 WHERE f.tenant_id = t.tenant_id AND f.queue = t.queue), 0) AS counter,
           (SELECT count(*) FROM docket_jobs j
            WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'running') AS actual
    FROM docket_tenant_queues t) c
WHERE counter <> actual`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var q, tenant string
		var counter, actual int64
		if err := rows.Scan(&q, &tenant, &counter, &actual); err != nil {
			f.t.Fatal(err)
		}
		f.t.Errorf("tenant %s in %s: running counter %d, running jobs %d", tenant, q, counter, actual)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
}

func tenantNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return names
}

// appTx begins an application's transaction, rolled back when the test
// ends unless committed, and returns it with an executor bound to it.
func (f *fixture) appTx() (pgx.Tx, driver.Executor) {
	f.t.Helper()
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(f.ctx)) })
	x, err := f.d.UnwrapTx(tx)
	if err != nil {
		f.t.Fatal(err)
	}
	return tx, x
}
