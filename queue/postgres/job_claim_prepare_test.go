package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue/driver"
)

// These tests hold docket_tenant_queues in ACCESS EXCLUSIVE mode, as a
// non-concurrent DDL statement does, where a claim's statements are
// prepared: before a connection's first claim, and past a claim's last
// retry (pgx dropped a failed batch's statements from its cache, so every
// retry prepared them again). Before job_claim_prepare.go that prepare ran
// in a round trip before the claim's lock_timeout, and waited for the lock
// until the caller's context ended.

// lockWaitBound is how long after a claim's attempt first waits its retry
// must start in a new transaction: the claim's lock_timeout (100 ms) and a
// round trip, with room for a loaded box.
const lockWaitBound = 5 * time.Second

// TestJobClaim_ColdLockWaitRetried: a connection's first claim, behind a
// relation lock, gives up after its lock_timeout while it prepares, runs
// again, and takes its job once the lock is free. The lock is released as
// the second attempt's prepare transaction starts (a tracer of its
// statements), so the test does not depend on seeing the waits as they
// happen.
func TestJobClaim_ColdLockWaitRetried(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var attempts secondPrepare
	x := f.coldClaimer(&attempts)
	f.enqueue(1, "a")
	attempts.arm(f.lockTenantQueues())
	r := <-f.claimAsync(f.ctx, x)
	if r.err != nil || r.n != 1 {
		t.Fatalf("claim after the lock was released: %d jobs, %v; want 1 job", r.n, r.err)
	}
	gap, n := attempts.result()
	if n < 2 {
		t.Fatalf("the claim prepared %d time(s); want a retry after its lock wait timed out", n)
	}
	t.Logf("the retry started %v after the first attempt", gap.Round(time.Millisecond))
	if gap > lockWaitBound {
		t.Errorf("the retry started %v after the first attempt, want within %v (lock_timeout 100 ms)", gap, lockWaitBound)
	}
	f.checkCounters()
}

// secondPrepare is a pgx tracer that counts a connection's prepare
// transactions (a cold claim's attempts) once armed, and calls release as
// the second one starts, noting how long after the first.
type secondPrepare struct {
	mu      sync.Mutex
	n       int
	first   time.Time
	gap     time.Duration
	release func()
}

func (s *secondPrepare) arm(release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n, s.release = 0, release
}

func (s *secondPrepare) result() (gap time.Duration, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gap, s.n
}

func (s *secondPrepare) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.HasPrefix(d.SQL, "BEGIN; SET LOCAL lock_timeout") {
		return ctx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release == nil {
		return ctx
	}
	switch s.n++; s.n {
	case 1:
		s.first = time.Now()
	case 2:
		s.gap = time.Since(s.first)
		s.release()
	}
	return ctx
}

func (s *secondPrepare) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestJobClaim_LockHeldGivesUp: behind a relation lock held past every
// retry, a claim returns lock_not_available (55P03) after its retries, on a
// warmed connection and on a cold one, instead of waiting for the caller's
// context; once the lock is gone the same executor claims again, and a
// claim on the warmed connection is still one batch and nothing else.
func TestJobClaim_LockHeldGivesUp(t *testing.T) {
	t.Parallel()
	for _, warm := range []bool{true, false} {
		name := map[bool]string{true: "warm", false: "cold"}[warm]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			trips := &roundTrips{}
			x := f.coldClaimer(trips)
			if warm {
				if jobs := f.claim(x, 1); len(jobs) != 0 {
					t.Fatalf("warm-up claim took %d jobs of an empty queue", len(jobs))
				}
			}
			release := f.lockTenantQueues()
			ctx, cancel := context.WithTimeout(f.ctx, 15*time.Second)
			defer cancel()
			r := <-f.claimAsync(ctx, x)
			t.Logf("claim behind the lock: %v after %v", r.err, r.elapsed.Round(time.Millisecond))
			var pgErr *pgconn.PgError
			if !errors.As(r.err, &pgErr) || pgErr.Code != "55P03" {
				t.Errorf("claim behind a held lock: %d jobs, %v; want lock_not_available (55P03)", r.n, r.err)
			}
			if r.elapsed > lockWaitBound {
				t.Errorf("claim behind a held lock returned after %v, want within %v (6 attempts of 100 ms)", r.elapsed, lockWaitBound)
			}
			release()
			if jobs := f.claim(x, 1); len(jobs) != 0 {
				t.Fatalf("claim of an empty queue took %d jobs", len(jobs))
			}
			for range 3 {
				trips.reset()
				if jobs := f.claim(x, 1); len(jobs) != 0 {
					t.Fatalf("claim of an empty queue took %d jobs", len(jobs))
				}
				if b, p, q := trips.counts(); b != 1 || p != 0 || q != 0 {
					t.Errorf("a warmed claim sent %d batches, %d prepares, %d other statements; want one batch", b, p, q)
				}
			}
			f.enqueue(1, "a")
			if jobs := f.claim(x, 1); len(jobs) != 1 {
				t.Fatalf("claim took %d jobs, want 1", len(jobs))
			}
			f.checkCounters()
		})
	}
}

// TestJobClaim_PreparedAgainAfterResultTypeChange: a claim's statements
// prepared on a connection whose result type a schema change altered fail
// once (cached plan must not change result type), as pgx's cached ones do,
// and the next claim prepares them again instead of failing for good.
func TestJobClaim_PreparedAgainAfterResultTypeChange(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x := f.warmClaimer()
	f.exec(`ALTER TABLE docket_jobs ALTER COLUMN stage TYPE varchar(200)`)
	f.enqueue(1, "a")
	_, _, err := x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
	t.Logf("first claim after the change: %v", err)
	n := 0
	if err == nil {
		n = 1 // the server planned again without complaint
	}
	if jobs := f.claim(x, 1); len(jobs)+n != 1 {
		t.Fatalf("claims after the change took %d jobs, want 1", len(jobs)+n)
	}
	f.checkCounters()
}

// roundTrips counts what pgx sends on a connection: batches, explicit
// prepares and other statements.
type roundTrips struct {
	mu                         sync.Mutex
	batches, prepares, queries int
}

func (r *roundTrips) add(n *int) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

func (r *roundTrips) reset() {
	r.mu.Lock()
	r.batches, r.prepares, r.queries = 0, 0, 0
	r.mu.Unlock()
}

func (r *roundTrips) counts() (batches, prepares, queries int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.batches, r.prepares, r.queries
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.add(&r.queries)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.add(&r.batches)
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.add(&r.prepares)
	return ctx
}

func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
