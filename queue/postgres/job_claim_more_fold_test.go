package postgres_test

import "testing"

// TestJobClaim_MoreSeesFoldedTenant: moreSQL left out every tenant row the
// claim's transaction had written (age(xmin) = 0), to leave out those it
// served; but the claim's first statement, foldFreedSQL, writes the rows
// of every tenant with a finish since the last claim, served or not. A
// claim that came back empty from a tenant still marked claimable with
// nothing left (a claim took its last job without finding it short) said
// more = false while a tenant whose job had just finished waited with two
// jobs and a free slot: the worker idled until its next poll.
func TestJobClaim_MoreSeesFoldedTenant(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(3, "c")
	f.finishAll(f.x, f.claim(f.x, 1)) // c's first job: a slot freed, recorded for the next claim to fold
	f.exec(`INSERT INTO docket_tenant_queues (queue, tenant_id, has_work, served_at)
VALUES ('q', 'stale', true, now() - interval '1 hour')`) // no job left, served before c
	if n, more := f.claimMore(1); n != 0 || !more {
		t.Fatalf("claim of 1 took the stale tenant: claimed %d, more %v; want 0, true (c has 2 pending jobs and a free slot)", n, more)
	}
	if n, _ := f.claimMore(1); n != 1 {
		t.Fatalf("claimed %d, want c's next job", n)
	}
}
