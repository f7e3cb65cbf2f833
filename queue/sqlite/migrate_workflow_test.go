package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// TestMigrate_Workflows: a database at version 8 with jobs in every state
// of then migrates to 9: the jobs keep their states and have no parent,
// the file is sound (integrity_check), the widened state CHECK takes
// waiting and refuses an unknown state, and an old pending job runs a
// workflow, on the connection that migrated and on fresh ones.
func TestMigrate_Workflows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docket.db")
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqlite.EngineLine().Until(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MigrateLine(ctx, old); err != nil {
		t.Fatalf("migrate to 8: %v", err)
	}
	_, err = d.DB().ExecContext(ctx, `INSERT INTO docket_jobs (queue, kind, tenant_id, state, run_at, created_at, updated_at)
SELECT 'q', 'k', 'acme', value, 0, 0, 0 FROM json_each('["pending", "scheduled", "completed", "failed", "cancelled"]')`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB().ExecContext(ctx, `INSERT INTO docket_tenant_queues (queue, tenant_id, has_work) VALUES ('q', 'acme', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatalf("migrate to the current version: %v", err)
	}
	var states, check string
	err = d.DB().QueryRowContext(ctx, `SELECT group_concat(state || ':' || coalesce(parent_id, '-') || ':' || children_open, ' ') FROM (SELECT * FROM docket_jobs ORDER BY id)`).Scan(&states)
	if err != nil || states != "pending:-:0 scheduled:-:0 completed:-:0 failed:-:0 cancelled:-:0" {
		t.Fatalf("jobs after the migration: %s (%v)", states, err)
	}
	if err := d.DB().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %s (%v)", check, err)
	}
	if _, err := d.DB().ExecContext(ctx, `UPDATE docket_jobs SET state = 'paused' WHERE id = 1`); err == nil {
		t.Error("the state CHECK takes an unknown state")
	}
	runWorkflow(t, d.Executor())
	_ = d.Close()

	// Reopened: fresh connections read the new schema from the file.
	d = openAt(t, path)
	if _, err := d.Executor().JobInsertMany(ctx, []*driver.JobInsertParams{{Queue: "q", Kind: "k", TenantID: "acme"}}); err != nil {
		t.Fatal(err)
	}
	runWorkflow(t, d.Executor())
}

// runWorkflow claims a pending job of tenant acme in queue q, spawns a
// step, waits for it and checks that the step's end wakes the parent.
func runWorkflow(t *testing.T, x driver.Executor) {
	t.Helper()
	ctx := context.Background()
	claim := func(what string) *queue.Job {
		t.Helper()
		jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim of the %s: %d jobs, %v", what, len(jobs), err)
		}
		return jobs[0]
	}
	finish := func(j *queue.Job, o queue.Outcome) {
		t.Helper()
		errs, err := x.JobFinish(ctx, []*driver.JobFinishParams{{Lease: j.Lease(), Outcome: o}})
		if err != nil || errs[0] != nil {
			t.Fatalf("finish %d %s: %v %v", j.ID, o, err, errs)
		}
	}
	parent := claim("parent")
	step := &driver.JobInsertParams{Queue: "q", Kind: "k", UniqueKey: driver.StepKey(parent.ID, "one")}
	if _, err := x.JobSpawn(ctx, &driver.JobSpawnParams{Lease: parent.Lease(), Children: []*driver.JobInsertParams{step}}); err != nil {
		t.Fatal(err)
	}
	finish(parent, queue.OutcomeWaiting)
	if j, err := x.JobGet(ctx, parent.ID); err != nil || j.State != queue.StateWaiting {
		t.Fatalf("parent after its await: %v, %v", j, err)
	}
	child := claim("step")
	if child.ParentID != parent.ID {
		t.Fatalf("claimed job %d of parent %d, want the step of %d", child.ID, child.ParentID, parent.ID)
	}
	finish(child, queue.OutcomeCompleted)
	again := claim("woken parent")
	if again.ID != parent.ID {
		t.Fatalf("after its step: claimed job %d, want the parent %d", again.ID, parent.ID)
	}
	finish(again, queue.OutcomeCompleted)
}
