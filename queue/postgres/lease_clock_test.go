package postgres_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestLease_LateInTransaction: a lease
// written late in a long transaction must run from the statement's clock
// (clock_timestamp()), not from the transaction's start (now()), or a
// renewal issued inside a long transaction would be stale as written. The
// plan's 30 s is shortened to lateBy: the check compares each deadline with
// the transaction's own now(), so it does not depend on how long the wait
// really was, only that it was at least lateBy — with leases from now() every
// check fails by lateBy.
func TestLease_LateInTransaction(t *testing.T) {
	t.Parallel()
	const (
		lateBy  = 2 * time.Second
		lease   = 10 * time.Second
		backoff = 10 * time.Second
	)
	f := setup(t)
	f.enqueue(1, "a", "b") // one each: a tenant's limit may be 1
	held := f.claim(f.x, 1)[0]
	tx, err := f.x.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	pgtx := tx.(*postgres.ExecutorTx).Tx()
	// The transaction's now() is fixed by its first statement at the latest.
	if _, err := pgtx.Exec(f.ctx, `SELECT now()`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lateBy)

	// since reads how far past the transaction's start a job's column is.
	since := func(id int64, column string) time.Duration {
		t.Helper()
		var d time.Duration
		if err := pgtx.QueryRow(f.ctx, `SELECT `+column+` - now() FROM docket_jobs WHERE id = $1`, id).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	check := func(what string, got, from time.Duration) {
		t.Helper()
		if want := from + lateBy; got < want {
			t.Errorf("%s: %v after the transaction's start, want at least %v (%v from a clock %v later)", what, got, want, from, lateBy)
		}
	}

	// A heartbeat renewing a lease.
	if renewed, err := tx.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{held.Lease()}, LeaseDuration: lease}); err != nil || len(renewed) != 1 {
		t.Fatalf("heartbeat in the transaction: %v, %d renewed", err, len(renewed))
	}
	check("renewed lease", since(held.ID, "lease_expires_at"), lease)

	// A claim's lease.
	jobs, _, err := tx.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: lease})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim in the transaction: %v, %d jobs", err, len(jobs))
	}
	check("claimed lease", since(jobs[0].ID, "lease_expires_at"), lease)

	// A retry's backoff.
	errs, err := tx.JobFinish(f.ctx, []*driver.JobFinishParams{{Lease: jobs[0].Lease(), Outcome: queue.OutcomeRetry, RetryIn: backoff}})
	if err != nil || errs[0] != nil {
		t.Fatalf("retry in the transaction: %v, %v", err, errs)
	}
	check("retry's run_at", since(jobs[0].ID, "run_at"), backoff)
}
