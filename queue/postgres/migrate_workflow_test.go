package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// TestDriver_MigrateWorkflows: a database at version 22 with jobs in every
// state of then migrates to 23: the jobs keep their states, have no
// parent, and an old pending job runs a workflow. The widened state CHECK
// is added without validating the table, and still refuses an unknown
// state.
func TestDriver_MigrateWorkflows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := postgres.New(pool)
	old, err := postgres.EngineLine().Until(22)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MigrateLine(ctx, old); err != nil {
		t.Fatalf("migrate to 22: %v", err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO docket_jobs (queue, kind, tenant_id, state, completed_at)
SELECT 'q', 'k', 'acme', s, CASE WHEN s IN ('completed', 'failed', 'cancelled') THEN now() END
FROM unnest(ARRAY['pending', 'scheduled', 'completed', 'failed', 'cancelled']) s`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO docket_tenant_queues (queue, tenant_id) VALUES ('q', 'acme')`); err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatalf("migrate to the current version: %v", err)
	}
	f := &fixture{t: t, ctx: ctx, d: d, x: d.Executor()}
	if got := f.queryString(`SELECT string_agg(state || ':' || coalesce(parent_id::text, '-') || ':' || children_open, ' ' ORDER BY id) FROM docket_jobs`); got != "pending:-:0 scheduled:-:0 completed:-:0 failed:-:0 cancelled:-:0" {
		t.Fatalf("jobs after the migration: %s", got)
	}
	if n := f.queryInt(`SELECT count(*) FROM pg_constraint WHERE conname = 'docket_jobs_state_check' AND NOT convalidated`); n != 1 {
		t.Error("the state CHECK was validated (a scan of the table) or is missing")
	}
	if _, err := pool.Exec(ctx, `UPDATE docket_jobs SET state = 'paused' WHERE id = 1`); err == nil {
		t.Error("the state CHECK takes an unknown state")
	}
	if def := f.queryString(`SELECT pg_get_indexdef('docket_jobs_parent'::regclass)`); def == "" {
		t.Error("no docket_jobs_parent")
	}
	// An old job runs a workflow.
	parent := f.claim(f.x, 1)[0]
	step := job("acme")
	step.UniqueKey = driver.StepKey(parent.ID, "one")
	res, err := f.x.JobSpawn(ctx, &driver.JobSpawnParams{Lease: parent.Lease(), Children: []*driver.JobInsertParams{step}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.x.JobFinish(ctx, []*driver.JobFinishParams{{Lease: parent.Lease(), Outcome: queue.OutcomeWaiting}}); err != nil {
		t.Fatal(err)
	}
	child := f.claim(f.x, 1)[0]
	if child.ID != res[0].Job.ID || child.ParentID != parent.ID {
		t.Fatalf("claimed job %d (parent %d), want the step %d", child.ID, child.ParentID, res[0].Job.ID)
	}
	if _, err := f.x.JobFinish(ctx, []*driver.JobFinishParams{{Lease: child.Lease(), Outcome: queue.OutcomeCompleted}}); err != nil {
		t.Fatal(err)
	}
	if got := f.claim(f.x, 1); len(got) != 1 || got[0].ID != parent.ID {
		t.Fatalf("after its step: claimed %d jobs, want the parent", len(got))
	}
}
