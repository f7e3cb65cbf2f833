package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// A job left running by a process that died is rescued at once after the
// database is opened again, not after its hour-long lease; a running job of
// the live process is not touched by a second Migrate.
func TestMigrate_ExpiresOrphanedLeases(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "docket.db")
	ctx := t.Context()
	d := openAt(t, path)
	x := d.Executor()
	if _, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{
		{Queue: "q", Kind: "k", TenantID: "a", Args: json.RawMessage(`{}`), MaxAttempts: 3},
		{Queue: "q", Kind: "k", TenantID: "b", Args: json.RawMessage(`{}`), MaxAttempts: 3},
	}); err != nil {
		t.Fatal(err)
	}
	claim := func(x driver.Executor) []*queue.Job {
		jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v, %d jobs", err, len(jobs))
		}
		return jobs
	}
	orphan := claim(x)[0]
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d2 := openAt(t, path)
	x2 := d2.Executor()
	live := claim(x2)[0]
	if err := d2.Migrate(ctx); err != nil { // a second Migrate must not end live leases
		t.Fatal(err)
	}
	rescued, err := x2.JobRescue(ctx, &driver.JobRescueParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rescued) != 1 || rescued[0].ID != orphan.ID || rescued[0].State != queue.StatePending {
		t.Fatalf("rescued %+v, want only the orphan %d back to pending", rescued, orphan.ID)
	}
	j, err := x2.JobGet(ctx, live.ID)
	if err != nil || j.State != queue.StateRunning {
		t.Fatalf("live job: %v, %+v", err, j)
	}
}
