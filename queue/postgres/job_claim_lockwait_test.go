package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// The claim bounds every lock wait of its transaction (claimLockTimeoutSQL
// in job_claim.go): PostgreSQL's SKIP LOCKED still waits when it follows a
// row's update chain, and such a wait closed a deadlock cycle in the churn
// soak (docs/reliability.md, "Churn soak"). That window (an updater committing
// between two lines of heap_lock_tuple) cannot be stepped from SQL, so these
// tests make the claim wait on a lock that can be: a session holding
// docket_tenant_queues in ACCESS EXCLUSIVE mode, which every claim's first
// statement needs. Without the bound the test fails: the claim waits on that
// one lock until the holder lets go.
//
// The bound covers the prepare too (job_claim_prepare.go): a connection's
// first claim prepares the batch's statements in a round trip of its own,
// and parse analysis takes the tables' relation locks, so behind a held
// ACCESS EXCLUSIVE lock (a non-concurrent DDL statement) that prepare
// waited without a bound until the claim prepared them itself, under the
// same lock_timeout; and pgx dropped a failed batch's statements from its
// cache, so each retry prepared them again, unbounded. The tests in
// job_claim_prepare_test.go take the lock before a connection's first claim,
// and hold it past a claim's last retry.

// warmClaimer returns an executor on a pool of one connection whose
// claim statements are prepared.
func (f *fixture) warmClaimer() driver.Executor {
	f.t.Helper()
	x := f.coldClaimer(nil)
	if jobs := f.claim(x, 1); len(jobs) != 0 {
		f.t.Fatalf("warm-up claim took %d jobs of an empty queue", len(jobs))
	}
	return x
}

// coldClaimer returns an executor on a pool of one open connection that has
// not claimed yet. tracer, when not nil, traces the connection's statements.
func (f *fixture) coldClaimer(tracer pgx.QueryTracer) driver.Executor {
	f.t.Helper()
	return postgres.New(f.onePool(tracer)).Executor()
}

// onePool returns a new pool of f's database with one connection, traced
// by tracer unless it is nil.
func (f *fixture) onePool(tracer pgx.QueryTracer) *pgxpool.Pool {
	f.t.Helper()
	cfg := f.d.Pool().Config()
	cfg.MaxConns = 1
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(f.ctx, cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(pool.Close)
	if err := pool.Ping(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	return pool
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

// TestJobClaim_LockWaitRetried: a claim waiting for a lock gives up after
// its lock_timeout, runs again in a new transaction, and takes its job once
// the lock is free. The lock is released as the claim's second attempt
// starts (a tracer of its batches), so the test does not depend on seeing
// the waits as they happen.
func TestJobClaim_LockWaitRetried(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var attempts secondBatch
	x := f.coldClaimer(&attempts)
	if jobs := f.claim(x, 1); len(jobs) != 0 { // prepares the claim's statements
		f.t.Fatalf("warm-up claim took %d jobs of an empty queue", len(jobs))
	}
	f.enqueue(1, "a")
	attempts.arm(f.lockTenantQueues())
	r := <-f.claimAsync(f.ctx, x)
	if r.err != nil || r.n != 1 {
		t.Fatalf("claim after the lock was released: %d jobs, %v; want 1 job", r.n, r.err)
	}
	if n := attempts.count(); n < 2 {
		t.Fatalf("the claim ran %d time(s); want a retry after its lock wait timed out", n)
	}
	f.checkCounters()
}

// secondBatch is a pgx tracer that counts a connection's batches (a claim's
// attempts) once armed, and calls release as the second one starts.
type secondBatch struct {
	mu      sync.Mutex
	n       int
	release func()
}

func (s *secondBatch) arm(release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n, s.release = 0, release
}

func (s *secondBatch) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *secondBatch) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release == nil {
		return ctx
	}
	if s.n++; s.n == 2 {
		s.release()
	}
	return ctx
}

func (s *secondBatch) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s *secondBatch) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (s *secondBatch) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (s *secondBatch) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// claimResult is what a claim run by claimAsync returned.
type claimResult struct {
	n       int
	err     error
	elapsed time.Duration
}

// claimAsync claims one job of queue q with x on a goroutine of its own and
// sends the result.
func (f *fixture) claimAsync(ctx context.Context, x driver.Executor) <-chan claimResult {
	done := make(chan claimResult, 1)
	go func() {
		start := time.Now()
		jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
		done <- claimResult{len(jobs), err, time.Since(start)}
	}()
	return done
}
