package drivertest

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// testJobClaimEmptiedTenant checks claims after a claim took a tenant's last
// pending job (found by the differential test, differential.go): the
// tenant has no work until it gets a job again, so it neither takes a
// claim's turn from a tenant that has work nor loses its own turn for a
// claim that gave it nothing.
func (s *suite) testJobClaimEmptiedTenant(t *testing.T) {
	t.Run("OthersClaimed", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a1 := f.enqueue("a")
		got := f.claimOne() // a's last job: a has no work
		if got.ID != a1.ID {
			t.Fatalf("claimed %s, want job %d", describe(got), a1.ID)
		}
		b := f.enqueueN("b", 2)
		b1 := f.claimOne() // b served after a
		if b1.ID != b[0].ID {
			t.Fatalf("claimed %s, want job %d", describe(b1), b[0].ID)
		}
		f.complete(got)
		f.complete(b1)
		// b has a pending job and a free slot, a has nothing pending: a
		// claim of one job takes b's, or, when the claim spent its turn
		// on a (a driver that learns a tenant is empty only by claiming
		// from it), comes back empty saying there is more, and the next
		// claim takes b's. Empty without more, a worker waits for its
		// next poll with b's job pending and a slot free.
		claim := func() ([]*driver.Job, bool) {
			jobs, more, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: testQueue, WorkerID: workerID, Max: 1, LeaseDuration: longLease})
			if err != nil {
				t.Fatalf("JobClaim: %v", err)
			}
			return jobs, more
		}
		jobs, more := claim()
		if len(jobs) == 0 && more {
			jobs, more = claim()
		}
		if len(jobs) != 1 || jobs[0].ID != b[1].ID {
			t.Fatalf("claim of max 1 got jobs %v (more=%v), want tenant b's pending job %d: "+
				"tenant a, whose last job an earlier claim took, has no pending job and must not take the claim's turn",
				ids(jobs), more, b[1].ID)
		}
	})
	t.Run("KeepsItsTurn", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a1 := f.enqueue("a")
		got := f.claimOne() // a served first, and left with no work
		if got.ID != a1.ID {
			t.Fatalf("claimed %s, want job %d", describe(got), a1.ID)
		}
		b := f.enqueueN("b", 3)
		b1 := f.claimOne() // b served after a
		if b1.ID != b[0].ID {
			t.Fatalf("claimed %s, want job %d", describe(b1), b[0].ID)
		}
		f.complete(got)
		f.complete(b1)
		// This claim may take b's next job or, wrongly, nothing; it gives a
		// nothing, since a has nothing pending.
		between := f.claim(testQueue, 1, longLease)
		for _, j := range between {
			if j.TenantID != "b" {
				t.Fatalf("claimed %s, want nothing of tenant a, which has no pending job", describe(j))
			}
			f.complete(j)
		}
		a2 := f.enqueue("a")
		// a was last served before b, both have work and free slots: a's
		// turn comes first.
		got2 := f.claim(testQueue, 1, longLease)
		if len(got2) != 1 || got2[0].ID != a2.ID {
			t.Fatalf("claim of max 1 got %v, want tenant a's job %d: a was last given a job before b was, "+
				"and the claim in between (which returned %v) gave a nothing, so it did not serve a",
				ids(got2), a2.ID, ids(between))
		}
	})
}
