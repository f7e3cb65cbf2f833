package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobFinish_TxIdleLimit: a caller's transaction that completed a job
// and then went silent (a client cut off between CompleteTx and COMMIT) is
// ended by the server after TxIdleLimit, releasing the job's row, and its
// commit fails; a transaction that commits in time is untouched, and the
// limit does not outlive the transaction on its session.
func TestJobFinish_TxIdleLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "acme", "globex") // one job per tenant: both run at once
	jobs := f.claim(f.x, 2)
	if len(jobs) != 2 {
		t.Fatalf("claimed %d jobs, want 2", len(jobs))
	}
	// Long enough that the check right after the finish is not itself
	// late on a loaded machine (at 300 ms it was, once, at load 20).
	const limit = 2 * time.Second

	complete := func(j *queue.Job) pgx.Tx {
		t.Helper()
		tx, err := f.d.Pool().Begin(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A failing check must not leave the connection in a transaction:
		// closing the pool would wait for it.
		t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(f.ctx)) })
		x, err := f.d.UnwrapTx(tx)
		if err != nil {
			t.Fatal(err)
		}
		errs, err := x.JobFinish(f.ctx, []*driver.JobFinishParams{{
			Lease: j.Lease(), Outcome: queue.OutcomeCompleted, TxIdleLimit: limit,
		}})
		if err != nil || errs[0] != nil {
			t.Fatalf("complete in transaction: %v, %v", err, errs)
		}
		return tx
	}

	// Silent past the limit: the server ends the session and the row is free.
	silent := complete(jobs[0])
	locked := `SELECT 1 - count(*) FROM (SELECT id FROM docket_jobs WHERE id = $1 FOR UPDATE SKIP LOCKED) s`
	if n := f.queryInt(locked, jobs[0].ID); n != 1 {
		t.Fatalf("job %d's row not locked by the completing transaction", jobs[0].ID)
	}
	time.Sleep(limit + time.Second)
	if n := f.queryInt(locked, jobs[0].ID); n != 0 {
		t.Fatalf("job %d's row still locked %s after its transaction went idle (limit %s)", jobs[0].ID, limit+time.Second, limit)
	}
	err := silent.Commit(f.ctx)
	var pgErr *pgconn.PgError
	if err == nil {
		t.Fatal("commit of the timed-out transaction succeeded")
	}
	if errors.As(err, &pgErr) && pgErr.Code != "25P03" { // idle_in_transaction_session_timeout
		t.Fatalf("commit after the idle limit: %v, want the session ended (25P03) or closed", err)
	}
	if j, err := f.x.JobGet(f.ctx, jobs[0].ID); err != nil || j.State != queue.StateRunning {
		t.Fatalf("job after its completing transaction was ended: %+v, %v; want still running (for the rescuer)", j, err)
	}

	// Committed in time: completed, and the session's own setting is back.
	tx := complete(jobs[1])
	var inside string
	if err := tx.QueryRow(f.ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&inside); err != nil || inside != "2s" {
		t.Fatalf("idle limit inside the transaction: %q, %v; want 2s", inside, err)
	}
	conn := tx.Conn()
	if err := tx.Commit(f.ctx); err != nil {
		t.Fatalf("commit in time: %v", err)
	}
	var after string
	if err := conn.QueryRow(f.ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&after); err != nil || after != "0" {
		t.Fatalf("idle limit on the session after the transaction: %q, %v; want the default 0", after, err)
	}
	if j, err := f.x.JobGet(f.ctx, jobs[1].ID); err != nil || j.State != queue.StateCompleted {
		t.Fatalf("job committed in time: %+v, %v", j, err)
	}
}

// TestJobProgress_TxIdleLimit: the write CompleteTx makes before its finish
// (a partial result not stored yet) locks the job's row, so it sets the
// transaction's idle limit first, as the finish does; outside a caller's
// transaction the limit is not touched.
func TestJobProgress_TxIdleLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "acme")
	jobs := f.claim(f.x, 1)
	if len(jobs) != 1 {
		t.Fatalf("claimed %d jobs, want 1", len(jobs))
	}
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(f.ctx)) }()
	x, err := f.d.UnwrapTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	err = x.JobProgress(f.ctx, &driver.JobProgressParams{
		Lease: jobs[0].Lease(), Stage: "done", Percent: 100, PartialResult: []byte(`{"pages":3}`),
		TxIdleLimit: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var inside string
	if err := tx.QueryRow(f.ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&inside); err != nil || inside != "1500ms" {
		t.Fatalf("idle limit after the progress write in the transaction: %q, %v; want 1500ms", inside, err)
	}
}
