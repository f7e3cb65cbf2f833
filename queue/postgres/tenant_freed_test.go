package postgres_test

import (
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobFinish_FreedSlotsFoldedByClaim: a worker's finish records the
// freed slot in docket_tenant_freed without touching the tenant row; the
// position already counts it free, and the next claim folds it in and may
// use the slot (limit 1). A finish inside a caller's transaction updates
// the tenant row at once.
func TestJobFinish_FreedSlotsFoldedByClaim(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(3, "acme")
	first := f.claim(f.x, 10)
	if len(first) != 1 {
		t.Fatalf("claimed %d jobs at limit 1, want 1", len(first))
	}
	f.finishAll(f.x, first)
	if n := f.queryInt(`SELECT running FROM docket_tenant_queues WHERE tenant_id = 'acme'`); n != 1 {
		t.Fatalf("tenant row running %d after a pooled finish, want 1 (not folded yet)", n)
	}
	if n := f.queryInt(`SELECT coalesce(sum(n), 0) FROM docket_tenant_freed WHERE tenant_id = 'acme' AND queue = 'q'`); n != 1 {
		t.Fatalf("recorded freed slots %d, want 1", n)
	}
	f.checkCounters()
	pendingID := f.queryInt(`SELECT min(id) FROM docket_jobs WHERE state = 'pending'`)
	pos, err := f.x.JobPosition(f.ctx, pendingID)
	if err != nil || pos.Running != 0 {
		t.Fatalf("position %+v, %v; want 0 running", pos, err)
	}

	second := f.claim(f.x, 10)
	if len(second) != 1 {
		t.Fatalf("claim after the finish got %d jobs, want 1 (the freed slot)", len(second))
	}
	if n := f.queryInt(`SELECT count(*) FROM docket_tenant_freed`); n != 0 {
		t.Fatalf("%d freed records left after the claim folded them", n)
	}
	if got := f.claim(f.x, 10); len(got) != 0 {
		t.Fatalf("claimed %d jobs while the tenant is at its limit", len(got))
	}
	f.checkCounters()

	tx, x := f.appTx()
	errs, err := x.JobFinish(f.ctx, []*driver.JobFinishParams{{Lease: second[0].Lease(), Outcome: queue.OutcomeCompleted}})
	if err != nil || errs[0] != nil {
		t.Fatalf("finish in a transaction: %v, %v", err, errs)
	}
	if err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.queryInt(`SELECT running FROM docket_tenant_queues WHERE tenant_id = 'acme'`); n != 0 {
		t.Fatalf("tenant row running %d after a finish in a transaction, want 0", n)
	}
	if n := f.queryInt(`SELECT count(*) FROM docket_tenant_freed`); n != 0 {
		t.Fatalf("%d freed records after a finish in a transaction, want 0", n)
	}
	f.checkCounters()
}
