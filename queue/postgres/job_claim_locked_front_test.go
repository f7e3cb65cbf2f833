package postgres_test

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// TestJobClaim_LockedTenantGoesBack: a claim that gets nothing from a
// tenant whose pending jobs another transaction holds (a cancel in
// progress, an application's transaction; SKIP LOCKED passes them) must
// move the tenant to the back, as claimSQL's comment says, or the tenant
// holds the front of every claim while the lock lasts. Since b6f407e a
// tenant marked idle that got nothing kept its served_at, whatever the
// reason it got nothing; rewakeSQL then found its held jobs pending and
// marked it claimable again, still first in line. Every claim of one job
// came back empty (and said more, for moreSQL now counts the row, its
// served_at being older than the transaction) while tenant b's job waited
// with a free slot.
func TestJobClaim_LockedTenantGoesBack(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "a") // a comes first: served_at ties, then tenant_id
	f.enqueue(1, "b")
	ids := f.queryInt(`SELECT count(*) FROM docket_jobs WHERE tenant_id = 'a'`)
	if ids != 2 {
		t.Fatalf("a has %d jobs, want 2", ids)
	}

	// A transaction cancels a's pending jobs and has not committed yet.
	_, cx := f.appTx()
	rows, err := f.d.Pool().Query(f.ctx, `SELECT id FROM docket_jobs WHERE tenant_id = 'a' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var held []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		held = append(held, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range held {
		if _, err := cx.JobCancel(f.ctx, &driver.JobCancelParams{ID: id}); err != nil {
			t.Fatal(err)
		}
	}

	var mores []bool
	for range 3 {
		n, more := f.claimMore(1)
		mores = append(mores, more)
		if n == 1 {
			if got := f.queryString(`SELECT tenant_id FROM docket_jobs WHERE state = 'running'`); got != "b" {
				t.Fatalf("claimed tenant %s's job, want b's", got)
			}
			return
		}
	}
	t.Fatalf("3 claims of one job took nothing (more %v) while tenant b had a pending job and a free slot: "+
		"tenant a, whose jobs another transaction holds, kept the front (served_at %s)",
		mores, f.queryString(`SELECT served_at::text FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`))
}
