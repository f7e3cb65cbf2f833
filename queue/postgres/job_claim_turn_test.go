package postgres_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobClaim_WaitTurn: a claim with WaitTurn waits for the claims of its
// queue in flight to end and then takes the tenant they held, where a claim
// without it skips the tenant at once; past WaitTurn it claims as usual,
// without an error.
func TestJobClaim_WaitTurn(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "a")

	// A claim in flight in another session: it holds the queue's claim lock
	// shared, as every claim does, and tenant a's row.
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	for _, sql := range []string{
		`SELECT pg_advisory_xact_lock_shared(1684763762, hashtext('q'))`,
		`SELECT FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a' FOR NO KEY UPDATE`,
	} {
		if _, err := tx.Exec(f.ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	if n, more := f.claimMore(10); n != 0 || !more {
		t.Fatalf("a held, no turn asked: claimed %d, more %v; want 0, true", n, more)
	}
	start := time.Now()
	jobs, more, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
		Queue: "q", WorkerID: "w", Max: 10, LeaseDuration: time.Hour, WaitTurn: 50 * time.Millisecond,
	})
	if err != nil || len(jobs) != 0 || !more {
		t.Fatalf("a held past the turn's wait: claimed %d, more %v, error %v; want 0, true, none", len(jobs), more, err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("the claim gave up its turn after %s; want the 50ms it was given", waited)
	}

	type claimed struct {
		jobs []*queue.Job
		err  error
	}
	done := make(chan claimed, 1)
	go func() {
		jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
			Queue: "q", WorkerID: "w", Max: 10, LeaseDuration: time.Hour, WaitTurn: time.Minute,
		})
		done <- claimed{jobs, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		if err := f.d.Pool().QueryRow(f.ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND classid = 1684763762 AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case c := <-done:
			t.Fatalf("the claim that waits its turn returned while the claim in flight ran: %d jobs, error %v", len(c.jobs), c.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no claim waiting for the queue's claim lock after 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-done:
		if c.err != nil || len(c.jobs) != 1 || c.jobs[0].TenantID != "a" {
			t.Fatalf("after the claim in flight ended: %d jobs, error %v; want a's job", len(c.jobs), c.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the claim that waited its turn did not return within 30s of the claim in flight's end")
	}
}
