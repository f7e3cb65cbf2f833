package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestFencing_ZombieLeavesCounters: after a rescue and a new claim, every
// write of the first attempt is refused and leaves the job and its tenant's
// running counter as the second attempt holds them.
func TestFencing_ZombieLeavesCounters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(2, "acme")
	old := f.claim(f.x, 1)[0]
	f.exec(`UPDATE docket_jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`, old.ID)
	if got, err := f.x.JobRescue(f.ctx, &driver.JobRescueParams{Limit: 10}); err != nil || len(got) != 1 {
		t.Fatalf("rescue: %v, %d jobs", err, len(got))
	}
	cur := f.claim(f.x, 1)[0]
	if cur.ID != old.ID || cur.Attempt != 2 {
		t.Fatalf("reclaimed job %d attempt %d, want job %d attempt 2", cur.ID, cur.Attempt, old.ID)
	}
	for _, o := range []queue.Outcome{queue.OutcomeCompleted, queue.OutcomeFailed, queue.OutcomeRetry, queue.OutcomeSnoozed, queue.OutcomeReleased} {
		errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{{Lease: old.Lease(), Outcome: o}})
		if err != nil || !errors.Is(errs[0], queue.ErrLeaseLost) {
			t.Fatalf("zombie finish %s: %v, %v; want ErrLeaseLost", o, err, errs[0])
		}
	}
	if err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: old.Lease(), Percent: 1}); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("zombie progress: %v", err)
	}
	if held, _ := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{old.Lease()}, LeaseDuration: time.Hour}); len(held) != 0 {
		t.Fatalf("zombie heartbeat renewed %v", held)
	}
	if n := f.queryInt(`SELECT running FROM docket_tenant_queues WHERE tenant_id = 'acme'`); n != 1 {
		t.Fatalf("running counter %d after zombie writes, want 1", n)
	}
	if got := f.claim(f.x, 10); len(got) != 0 {
		t.Fatalf("claimed %d jobs while the tenant is at its limit", len(got))
	}
	f.checkCounters()
	// A mixed batch: the zombie's write is refused, the current one's
	// applies, in one call.
	errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{
		{Lease: old.Lease(), Outcome: queue.OutcomeCompleted},
		{Lease: cur.Lease(), Outcome: queue.OutcomeCompleted},
	})
	if err != nil || !errors.Is(errs[0], queue.ErrLeaseLost) || errs[1] != nil {
		t.Fatalf("mixed batch: %v, %v", err, errs)
	}
	f.checkCounters()
	if got := f.claim(f.x, 10); len(got) != 1 {
		t.Fatalf("claimed %d jobs after the slot was freed, want 1", len(got))
	}
}
