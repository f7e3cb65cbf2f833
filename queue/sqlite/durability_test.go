package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// Everything a store holds is there again after Close and Open: jobs in
// every state, attempts, limits, leadership, and the slot counts a claim
// relies on.
func TestDriver_DurableAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docket.db")
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	before, doneID := fillStore(t, d.Executor())
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	reopened := time.Now()
	x := openAt(t, path).Executor()
	for id, want := range before {
		got, err := x.JobGet(ctx, id)
		if err != nil {
			t.Fatalf("job %d after reopen: %v", id, err)
		}
		// A running job's lease is ended at reopen: its process is gone
		// (see TestMigrate_ExpiresOrphanedLeases).
		leaseOK := got.LeaseExpiresAt.Equal(want.LeaseExpiresAt) ||
			want.State == queue.StateRunning && !got.LeaseExpiresAt.After(time.Now()) && !got.LeaseExpiresAt.Before(reopened.Add(-time.Second))
		if got.State != want.State || got.Attempt != want.Attempt || got.LeaseToken != want.LeaseToken ||
			!leaseOK || !got.UpdatedAt.Equal(want.UpdatedAt) ||
			string(got.Args) != string(want.Args) || string(got.Result) != string(want.Result) || got.UniqueKey != want.UniqueKey {
			t.Fatalf("job %d after reopen:\n got %+v\nwant %+v", id, got, want)
		}
	}
	if as, err := x.JobAttempts(ctx, doneID); err != nil || len(as) != 1 || as[0].Outcome != queue.OutcomeCompleted {
		t.Fatalf("attempts after reopen: %v, %v", as, err)
	}
	// Leadership does not survive a reopen: its holder was the process
	// that closed the file.
	if ok, err := x.LeaderAttempt(ctx, &driver.LeaderParams{Name: "m", LeaderID: "other", TTL: time.Hour}); !ok || err != nil {
		t.Fatalf("leadership of the dead process kept across reopen: %v %v", ok, err)
	}
	dup, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{{Queue: "q", Kind: "k", TenantID: "a", UniqueKey: "u1"}})
	if err != nil || !dup[0].Duplicate {
		t.Fatalf("unique key after reopen: %+v, %v", dup, err)
	}
	// a's slot is still taken by its running job; b's was freed.
	more, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 10, LeaseDuration: time.Hour})
	if err != nil || len(more) != 0 {
		t.Fatalf("claim after reopen: %d jobs, %v; want none (a at its limit, b and c have none pending)", len(more), err)
	}
}

// fillStore leaves jobs in several states, an attempt record and a leader,
// and returns the jobs as stored and the id of the completed one.
func fillStore(t *testing.T, x driver.Executor) (map[int64]*queue.Job, int64) {
	t.Helper()
	ctx := context.Background()
	res, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{
		{Queue: "q", Kind: "k", TenantID: "a", Args: json.RawMessage(`{"n":1}`), MaxAttempts: 3, UniqueKey: "u1"},
		{Queue: "q", Kind: "k", TenantID: "a", Args: json.RawMessage(`{"n":2}`), MaxAttempts: 3},
		{Queue: "q", Kind: "k", TenantID: "b", Args: json.RawMessage(`{"n":3}`), MaxAttempts: 3},
		{Queue: "q", Kind: "k", TenantID: "c", Args: json.RawMessage(`{}`), MaxAttempts: 3, RunAt: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 10, LeaseDuration: time.Hour})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %d jobs, %v; want a's first and b's", len(claimed), err)
	}
	done := claimed[0]
	if done.TenantID != "b" {
		done = claimed[1]
	}
	errs, err := x.JobFinish(ctx, []*driver.JobFinishParams{{Lease: done.Lease(), Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`{"ok":true}`)}})
	if err != nil || errs[0] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
	if ok, err := x.LeaderAttempt(ctx, &driver.LeaderParams{Name: "m", LeaderID: "w", TTL: time.Hour}); !ok || err != nil {
		t.Fatalf("leader: %v %v", ok, err)
	}
	jobs := make(map[int64]*queue.Job)
	for _, r := range res {
		if jobs[r.Job.ID], err = x.JobGet(ctx, r.Job.ID); err != nil {
			t.Fatal(err)
		}
	}
	return jobs, done.ID
}
