package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestJobClaim_PrepareCutIdleLimit: a connection's first claim prepares the
// claim's statements, one round trip each, in a transaction of their own.
// Wherever a partition cuts that (after its k-th ReadyForQuery, for every
// k), a session left idle in the transaction with a lock on docket_jobs is
// ended by the server once its idle limit (the claim's lease, at least a
// second) has passed.
//
// It failed before the prepare's transaction had that limit: the session
// stayed idle in it, holding RowExclusiveLock on docket_jobs and the other
// tables parsed so far, until the client came back (the nightly
// TestPartition_MidTransaction saw one through a 6 s partition).
func TestJobClaim_PrepareCutIdleLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "a", "b")
	const lease = 300 * time.Millisecond
	locking := 0
	for k := 1; ; k++ {
		if k > 20 {
			t.Fatal("the claim took more than 20 round trips")
		}
		cut, locked := cutClaim(t, f, lease, k)
		if !cut {
			break
		}
		if locked {
			locking++
		}
	}
	if locking == 0 {
		t.Fatal("no cut left a session holding a lock on docket_jobs: the test checked nothing")
	}
}

// cutClaim claims on a pool of one new connection that is cut after its
// k-th ReadyForQuery from the claim's start, and reports whether the cut
// happened (false: the claim needed fewer round trips) and whether it left
// the session idle in a transaction holding a lock on docket_jobs, which
// the server must then end within the lease and a margin.
func cutClaim(t *testing.T, f *fixture, lease time.Duration, k int) (cut, locked bool) {
	t.Helper()
	cfg := f.d.Pool().Config().Copy()
	cfg.MinConns, cfg.MaxConns = 0, 1
	var cc *cutConn
	cfg.ConnConfig.DialFunc = cuttingDial(cfg.ConnConfig.DialFunc, &cc)
	pool, err := pgxpool.NewWithConfig(f.ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := pool.QueryRow(f.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Conn.Close() }) // the partition's end: the server sees the close
	ctx, cancel := context.WithCancel(f.ctx)
	claimed := make(chan error, 1)
	cc.arm(k)
	go func() {
		_, _, err := postgres.New(pool).Executor().JobClaim(ctx, &driver.JobClaimParams{
			Queue: "q", WorkerID: "w", Max: 2, LeaseDuration: lease})
		claimed <- err
	}()
	defer func() {
		cancel()
		if err := <-claimed; err != nil {
			t.Logf("cut after round trip %d: JobClaim: %v", k, err)
		}
		go pool.Close() // waits for nothing the server will answer
	}()
	select {
	case <-cc.cutCh:
	case err := <-claimed:
		claimed <- err // for the deferred receive
		if !cc.isCut() {
			if err != nil {
				t.Fatalf("JobClaim in %d round trips: %v", k-1, err)
			}
			return false, false
		}
	}
	return true, f.checkCutSession(k, pid, max(lease, time.Second)) // the prepare's idle limit
}
