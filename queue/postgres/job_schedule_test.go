package postgres_test

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// TestJobSchedule_RepairsLostWakeUp stages the lost wake-up (a tenant
// marked idle while it has a pending job, as a claim racing an insert
// leaves it) and checks that the next sweep repairs it.
func TestJobSchedule_RepairsLostWakeUp(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "acme")
	f.exec(`UPDATE docket_tenant_queues SET has_work = false, cleared_at = clock_timestamp() WHERE tenant_id = 'acme'`)
	if got := f.claim(f.x, 10); len(got) != 0 {
		t.Fatalf("claimed %d jobs of an idle-marked tenant", len(got))
	}
	if _, err := f.x.JobSchedule(f.ctx, &driver.JobScheduleParams{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if got := f.claim(f.x, 10); len(got) != 1 {
		t.Fatalf("after the sweep claimed %d jobs, want 1", len(got))
	}
}

// TestJobSchedule_RepairsOldLostWakeUp: a row cleared long ago is checked
// by the full pass, which a fresh driver runs on its first sweep.
func TestJobSchedule_RepairsOldLostWakeUp(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "acme")
	f.exec(`UPDATE docket_tenant_queues SET has_work = false, cleared_at = clock_timestamp() - interval '1 hour'
		WHERE tenant_id = 'acme'`)
	if _, err := f.x.JobSchedule(f.ctx, &driver.JobScheduleParams{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if got := f.claim(f.x, 10); len(got) != 1 {
		t.Fatalf("after the first sweep claimed %d jobs, want 1", len(got))
	}
}

// TestJobClaim_ClearsIdleTenants: a tenant found empty leaves the claimable
// index, and an insert brings it back.
func TestJobClaim_ClearsIdleTenants(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "acme")
	f.finishAll(f.x, f.claim(f.x, 10))
	f.claim(f.x, 10) // finds acme empty
	if n := f.queryInt(`SELECT count(*) FROM docket_tenant_queues WHERE has_work`); n != 0 {
		t.Fatalf("%d tenants still marked with work", n)
	}
	f.enqueue(1, "acme")
	if got := f.claim(f.x, 10); len(got) != 1 {
		t.Fatalf("claimed %d after a new insert, want 1", len(got))
	}
}
