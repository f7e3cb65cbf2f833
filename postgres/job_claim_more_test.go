package postgres_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// claimMore claims up to max jobs of queue q and returns how many, and
// whether the claim says tenants were left untaken.
func (f *fixture) claimMore(max int) (int, bool) {
	f.t.Helper()
	jobs, more, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: max, LeaseDuration: time.Hour})
	if err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	return len(jobs), more
}

// TestJobClaim_More: a claim reports the claimable tenants with two or more
// pending jobs it left untaken, held by another transaction or beyond its
// size, and only those.
func TestJobClaim_More(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "a")
	if n, more := f.claimMore(10); n != 1 || more {
		t.Fatalf("one tenant, limit 1: claimed %d, more %v; want 1, false", n, more)
	}

	f.enqueue(2, "b")
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	// Another process's claim or finish holds b's row.
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'b' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || !more {
		t.Fatalf("b held: claimed %d, more %v; want 0, true", n, more)
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 1 || more {
		t.Fatalf("b released: claimed %d, more %v; want 1, false", n, more)
	}

	f.enqueue(2, "c", "d")
	if n, more := f.claimMore(1); n != 1 || !more {
		t.Fatalf("two tenants, claim of 1: claimed %d, more %v; want 1, true", n, more)
	}
	if n, more := f.claimMore(1); n != 1 || more {
		t.Fatalf("the other tenant: claimed %d, more %v; want 1, false (c is at its limit)", n, more)
	}

	// One job held with its tenant, as the winner of a thundering herd
	// holds it: the losers are not sent back for it.
	f.enqueue(1, "h")
	tx, err = f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `SELECT FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'h' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || more {
		t.Fatalf("h held with one job: claimed %d, more %v; want 0, false", n, more)
	}
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.finishAll(f.x, f.claim(f.x, 10)) // h's job

	// A paused tenant with work is not left "untaken".
	f.enqueue(2, "e")
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "e", Paused: true}); err != nil {
		t.Fatal(err)
	}
	if n, more := f.claimMore(10); n != 0 || more {
		t.Fatalf("only a paused tenant has work: claimed %d, more %v; want 0, false", n, more)
	}
}
