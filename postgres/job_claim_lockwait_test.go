package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/postgres"
	"github.com/docketq/docket/queue/driver"
)

// The claim bounds every lock wait of its transaction (claimLockTimeoutSQL
// in job_claim.go): PostgreSQL's SKIP LOCKED still waits when it follows a
// row's update chain, and such a wait closed a deadlock cycle in the churn
// soak (docs/reliability.md, "Test 24"). That window (an updater committing
// between two lines of heap_lock_tuple) cannot be stepped from SQL, so these
// tests make the claim wait on a lock that can be: a session holding
// docket_tenant_queues in ACCESS EXCLUSIVE mode, which every claim's first
// statement needs. Without the bound the test fails: the claim waits on that
// one lock until the holder lets go.
//
// The bound covers the claim's execution only. A connection's first claim
// prepares the batch's statements in a round trip of its own, before the
// transaction that sets the limit, and parse analysis takes the tables'
// relation locks: behind a held ACCESS EXCLUSIVE lock (a non-concurrent DDL
// statement) that prepare waits without a bound. The tests therefore claim
// once on a connection of their own before the lock is taken; the waits
// the bound is for, on rows, come at execution. A batch that fails makes pgx
// drop its statements from the connection's cache, so the retry prepares
// them again and waits there, unbounded, for this test's lock (not for a row
// lock, which parse analysis does not take): the test therefore releases the
// lock once the retry waits, and does not check that a claim behind a lock
// held for good gives up after its last retry.

// warmClaimer returns an executor on a pool of one connection whose
// statement cache holds the claim's statements.
func (f *fixture) warmClaimer() driver.Executor {
	f.t.Helper()
	cfg := f.d.Pool().Config()
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(f.ctx, cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(pool.Close)
	x := postgres.New(pool).Executor()
	if jobs := f.claim(x, 1); len(jobs) != 0 {
		f.t.Fatalf("warm-up claim took %d jobs of an empty queue", len(jobs))
	}
	return x
}

// lockTenantQueues holds docket_tenant_queues in ACCESS EXCLUSIVE mode in a
// transaction of its own until the returned function rolls it back.
func (f *fixture) lockTenantQueues() (release func()) {
	f.t.Helper()
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `LOCK TABLE docket_tenant_queues IN ACCESS EXCLUSIVE MODE`); err != nil {
		_ = tx.Rollback(f.ctx)
		f.t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(context.WithoutCancel(f.ctx))
		}
	}
	f.t.Cleanup(release)
	return release
}

// claimWaiter identifies one transaction waiting for a lock.
type claimWaiter struct {
	PID       int32
	XactStart time.Time
}

// lockWaiters lists the transactions of f's database waiting for a lock.
func (f *fixture) lockWaiters() []claimWaiter {
	f.t.Helper()
	rows, err := f.d.Pool().Query(f.ctx, `
SELECT pid, xact_start FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`)
	if err != nil {
		f.t.Fatal(err)
	}
	ws, err := pgx.CollectRows(rows, pgx.RowToStructByPos[claimWaiter])
	if err != nil {
		f.t.Fatal(err)
	}
	return ws
}

// TestJobClaim_LockWaitRetried: a claim waiting for a lock gives up after
// its lock_timeout, runs again in a new transaction, and takes its job once
// the lock is free.
func TestJobClaim_LockWaitRetried(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x := f.warmClaimer()
	f.enqueue(1, "a")
	release := f.lockTenantQueues()
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		jobs, _, err := x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
		done <- result{len(jobs), err}
	}()
	// Wait for two waiting transactions, one after the other: the claim's
	// first attempt and its retry.
	var seen []claimWaiter
	deadline := time.Now().Add(20 * time.Second)
	for len(seen) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("waiting transactions seen in 20 s: %d (%+v), want a claim's attempt and its retry", len(seen), seen)
		}
		select {
		case r := <-done:
			t.Fatalf("the claim ended while the lock was held: %d jobs, %v", r.n, r.err)
		default:
		}
		for _, w := range f.lockWaiters() {
			if len(seen) == 0 || !w.XactStart.Equal(seen[len(seen)-1].XactStart) {
				seen = append(seen, w)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	release()
	r := <-done
	if r.err != nil || r.n != 1 {
		t.Fatalf("claim after the lock was released: %d jobs, %v; want 1 job", r.n, r.err)
	}
	f.checkCounters()
}
