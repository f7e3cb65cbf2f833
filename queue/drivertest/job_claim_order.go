package drivertest

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// testJobClaimOrderAfterChurn checks that a job which comes back to pending
// behind the claims already made (a release, a retry, a rescue, the
// schedule sweep, a new job of a higher priority) is claimed in its place
// in line, first. A store may remember where a tenant's pending jobs start
// to skip what it claimed before (PostgreSQL's claim floor); each of these
// paths must move that start back.
func (s *suite) testJobClaimOrderAfterChurn(t *testing.T) {
	// churn claims three of a tenant's six jobs one claim at a time, so
	// that a store keeping a start position has moved it past the first,
	// then lets back (which may use the three claimed jobs) put a job back
	// in line, and checks that the next claim takes want(jobs, claimed).
	churn := func(t *testing.T, f *fixture, jobs []*queue.Job, back func(claimed []*queue.Job) *queue.Job) {
		t.Helper()
		var claimed []*queue.Job
		for i := range 3 {
			got := f.claimOne()
			if got.ID != jobs[i].ID {
				t.Fatalf("claim %d: job %d, want %d", i, got.ID, jobs[i].ID)
			}
			claimed = append(claimed, got)
		}
		want := back(claimed)
		if got := f.claimOne(); got.ID != want.ID {
			t.Fatalf("after the churn: claimed job %d (priority %d), want job %d (priority %d), back in line",
				got.ID, got.Priority, want.ID, want.Priority)
		}
	}
	setup := func(t *testing.T) (*fixture, []*queue.Job) {
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		return f, f.enqueueN("a", 6)
	}
	// backToPending finishes the first claimed job with outcome and, when
	// the store schedules it, runs the schedule sweep until it is pending.
	backToPending := func(f *fixture, claimed []*queue.Job, outcome queue.Outcome) *queue.Job {
		f.t.Helper()
		j := claimed[0]
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: outcome, WorkerID: workerID}); err != nil {
			f.t.Fatalf("finish job %d %s: %v", j.ID, outcome, err)
		}
		eventually(f.t, "the job to be pending again", func() bool {
			if f.get(j.ID).State == queue.StatePending {
				return true
			}
			f.schedule(100)
			return false
		})
		return j
	}
	t.Run("Released", func(t *testing.T) {
		t.Parallel()
		f, jobs := setup(t)
		churn(t, f, jobs, func(claimed []*queue.Job) *queue.Job {
			return backToPending(f, claimed, queue.OutcomeReleased)
		})
	})
	t.Run("RetryNow", func(t *testing.T) {
		t.Parallel()
		f, jobs := setup(t)
		churn(t, f, jobs, func(claimed []*queue.Job) *queue.Job {
			return backToPending(f, claimed, queue.OutcomeRetry)
		})
	})
	t.Run("Rescued", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		short := f.insert(params("a"))[0].Job
		f.enqueueN("a", 5)
		first := f.claim(testQueue, 1, time.Second)
		if len(first) != 1 || first[0].ID != short.ID {
			t.Fatalf("claimed %v, want job %d", ids(first), short.ID)
		}
		for range 2 {
			f.claimOne()
		}
		f.rescueUntil(short.ID)
		if got := f.claimOne(); got.ID != short.ID {
			t.Fatalf("after the rescue: claimed job %d, want the rescued job %d", got.ID, short.ID)
		}
	})
	t.Run("Scheduled", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		early, runAt := f.insertSoon(params("a"))
		jobs := f.enqueueN("a", 5)
		churn(t, f, jobs, func([]*queue.Job) *queue.Job {
			waitPast(runAt)
			eventually(t, "JobSchedule to move the job", func() bool { return f.schedule(100) > 0 })
			return early[0]
		})
	})
	t.Run("HigherPriority", func(t *testing.T) {
		t.Parallel()
		f, jobs := setup(t)
		churn(t, f, jobs, func([]*queue.Job) *queue.Job {
			p := params("a")
			p.Priority = 3
			return f.insert(p)[0].Job
		})
	})
	t.Run("SamePriorityWaits", func(t *testing.T) {
		t.Parallel()
		f, jobs := setup(t)
		churn(t, f, jobs, func([]*queue.Job) *queue.Job {
			f.enqueue("a")
			return jobs[3]
		})
	})
}
