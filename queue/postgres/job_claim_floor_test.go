package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// floor returns tenant a's claim floor id in queue q (0: none).
func (f *fixture) floor() int64 {
	f.t.Helper()
	return f.queryInt(`SELECT coalesce(floor_id, 0) FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`)
}

// floorSetup enqueues n jobs of tenant a with room to claim them all and
// returns their ids in line.
func floorSetup(t *testing.T, n int) (*fixture, []int64) {
	f := setup(t)
	if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", Queue: "q", MaxRunning: 100}); err != nil {
		t.Fatal(err)
	}
	res, err := f.x.JobInsertMany(f.ctx, func() []*driver.JobInsertParams {
		ps := make([]*driver.JobInsertParams, n)
		for i := range ps {
			ps[i] = job("a")
		}
		return ps
	}())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return f, ids
}

// claimID claims one job and checks it is want.
func (f *fixture) claimID(want int64) {
	f.t.Helper()
	jobs := f.claim(f.x, 1)
	if len(jobs) != 1 || jobs[0].ID != want {
		got := int64(0)
		if len(jobs) > 0 {
			got = jobs[0].ID
		}
		f.t.Fatalf("claimed job %d (%d jobs), want %d", got, len(jobs), want)
	}
}

// TestJobClaim_FloorMoves: each claim moves the tenant's floor to its
// first pending job, so that the next claim's index scan starts there; with
// none left, to the first job the claim took.
func TestJobClaim_FloorMoves(t *testing.T) {
	t.Parallel()
	f, ids := floorSetup(t, 3)
	for i := range 2 {
		f.claimID(ids[i])
		if got := f.floor(); got != ids[i+1] {
			t.Fatalf("after claim %d: floor at job %d, want %d (the next pending job)", i, got, ids[i+1])
		}
	}
	f.claimID(ids[2])
	if got := f.floor(); got != ids[2] {
		t.Fatalf("after the last claim: floor at job %d, want %d (the job it took)", got, ids[2])
	}
}

// TestJobClaim_FloorStopsAtSkippedJob: a pending job the claim skipped
// because another transaction held its row (a cancel that then rolled
// back) keeps the floor before it, and is claimed next.
func TestJobClaim_FloorStopsAtSkippedJob(t *testing.T) {
	t.Parallel()
	f, ids := floorSetup(t, 5)
	f.claimID(ids[0])
	f.claimID(ids[1])
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_jobs WHERE id = $1 FOR UPDATE`, ids[2]); err != nil {
		t.Fatal(err)
	}
	f.claimID(ids[3]) // skips the locked job
	if got := f.floor(); got > ids[2] {
		t.Fatalf("floor at job %d, past the pending job %d the claim skipped", got, ids[2])
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.claimID(ids[2])
	f.claimID(ids[4])
}

// TestJobClaim_FloorWaitsForInserts: while an insert of the tenant is in
// progress (it holds the tenant's advisory lock shared, as
// docket_insert_jobs does), a claim leaves the floor where it was: the
// insert's job may have an id below the jobs claimed.
func TestJobClaim_FloorWaitsForInserts(t *testing.T) {
	t.Parallel()
	f, ids := floorSetup(t, 5)
	f.claimID(ids[0])
	before := f.floor()
	err := pgx.BeginFunc(f.ctx, f.d.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(f.ctx, `SELECT pg_advisory_xact_lock_shared(1684763761, docket_tenant_lock_key('q', 'a'))`); err != nil {
			return err
		}
		f.claimID(ids[1])
		if got := f.floor(); got != before {
			t.Errorf("floor moved from job %d to %d while an insert was in progress", before, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.claimID(ids[2])
	if got := f.floor(); got != ids[3] {
		t.Fatalf("after the insert ended: floor at job %d, want %d", got, ids[3])
	}
}

// TestJobClaim_FloorAcrossPriorities: the floor follows the fetch order
// (priority, then id) across priorities, and a pending job the claim
// skipped because another transaction held its row keeps the floor at it.
func TestJobClaim_FloorAcrossPriorities(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", Queue: "q", MaxRunning: 100}); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, prio := range []int{5, 5, 3, 3, 1, 1} {
		p := job("a")
		p.Priority = prio
		res, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res[0].Job.ID)
	}
	f.claimID(ids[0])
	f.claimID(ids[1])
	f.claimID(ids[2])
	if got := f.floor(); got != ids[3] {
		t.Fatalf("floor at job %d, want %d (priority 3's second, the next pending job)", got, ids[3])
	}
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_jobs WHERE id = $1 FOR UPDATE`, ids[3]); err != nil {
		t.Fatal(err)
	}
	f.claimID(ids[4]) // priority 1, past the locked priority-3 job
	if got := f.floor(); got != ids[3] {
		t.Fatalf("floor at job %d, want it at %d, the pending job the claim skipped", got, ids[3])
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	p := job("a")
	p.Priority = 4
	res, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
	if err != nil {
		t.Fatal(err)
	}
	f.claimID(res[0].Job.ID) // priority 4, ahead of the floor
	f.claimID(ids[3])
	f.claimID(ids[5])
}
