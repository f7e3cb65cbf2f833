package drivertest

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobCancel(t *testing.T) {
	t.Run("Waiting", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name  string
			runAt time.Duration
		}{{"Pending", 0}, {"Scheduled", time.Hour}} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				p := params("a")
				if tc.runAt > 0 {
					p.RunAt = time.Now().Add(tc.runAt)
				}
				j := f.insert(p)[0].Job
				before := time.Now()
				got := f.cancel(&driver.JobCancelParams{ID: j.ID, TenantID: "a", Reason: "user"})
				for _, c := range []*queue.Job{got, f.get(j.ID)} {
					if c.ID != j.ID || c.State != queue.StateCancelled {
						t.Fatalf("cancelled %+v, want job %d cancelled", c, j.ID)
					}
					near(t, "CompletedAt", c.CompletedAt, before)
				}
				f.claimNone()
				if len(f.attempts(j.ID)) != 0 {
					t.Fatal("cancelling a job that never ran recorded an attempt")
				}
			})
		}
	})
	t.Run("Running", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		next := f.enqueue("a")
		j := f.claimOne()
		got := f.cancel(&driver.JobCancelParams{ID: j.ID})
		if got.State != queue.StateCancelled || got.LeaseToken != 0 {
			t.Fatalf("cancelled %+v, want cancelled without a lease", got)
		}
		if held := f.heartbeat(time.Hour, j.Lease()); len(held) != 0 {
			t.Fatal("the lease of a cancelled job is still held")
		}
		wantErr(t, "progress after cancel", f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: j.Lease(), Stage: "x"}), queue.ErrLeaseLost)
		wantErr(t, "finish after cancel", f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}), queue.ErrLeaseLost)
		f.wantState(j.ID, queue.StateCancelled)
		wantAttempts(t, f.attempts(j.ID), attemptWant{1, queue.OutcomeCancelled, anyError})
		// Its handler may still run: the slot stays taken until the worker
		// says the handler returned.
		f.claimNone()
		if n := f.releaseSlots(j.Lease()); n != 1 {
			t.Fatalf("JobSlotRelease freed %d slots, want 1", n)
		}
		if n := f.releaseSlots(j.Lease()); n != 0 {
			t.Fatalf("a second JobSlotRelease freed %d slots, want 0", n)
		}
		if c := f.claimOne(); c.ID != next.ID {
			t.Fatalf("claimed %s, want the tenant's next job %d (slot freed)", describe(c), next.ID)
		}
	})
	t.Run("HeldSlotOnlyByItsLease", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		f.enqueue("a")
		j := f.claimOne()
		f.cancel(&driver.JobCancelParams{ID: j.ID})
		for _, l := range []queue.Lease{
			{JobID: j.ID, Attempt: j.Attempt, Token: j.LeaseToken + 1},
			{JobID: j.ID, Attempt: j.Attempt + 1, Token: j.LeaseToken},
			{JobID: j.ID + 100, Attempt: j.Attempt, Token: j.LeaseToken},
		} {
			if n := f.releaseSlots(l); n != 0 {
				t.Fatalf("JobSlotRelease(%+v) freed %d slots with a lease not the cancelled attempt's", l, n)
			}
		}
		if n := f.releaseSlots(); n != 0 {
			t.Fatalf("JobSlotRelease() freed %d slots", n)
		}
		f.claimNone()
	})
	t.Run("HeldSlotExpires", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		next := f.enqueue("a")
		j := f.claim(testQueue, 1, shortLease)[0]
		f.cancel(&driver.JobCancelParams{ID: j.ID})
		if got := f.claim(testQueue, 1, longLease); len(got) != 0 {
			t.Fatalf("claimed %s while the cancelled job's slot is held", describe(got[0]))
		}
		// The worker that ran it died: the slot is freed once its lease, as
		// last renewed, has expired, by the rescue sweep.
		var got []*queue.Job
		eventually(t, "the held slot freed by the rescue sweep", func() bool {
			if _, err := f.x.JobRescue(f.ctx, &driver.JobRescueParams{Limit: 1000}); err != nil {
				t.Fatalf("JobRescue: %v", err)
			}
			got = f.claim(testQueue, 1, longLease)
			return len(got) == 1
		})
		if got[0].ID != next.ID {
			t.Fatalf("claimed %s, want the tenant's next job %d", describe(got[0]), next.ID)
		}
		f.wantState(j.ID, queue.StateCancelled)
		if n := f.releaseSlots(j.Lease()); n != 0 {
			t.Fatalf("JobSlotRelease after the sweep freed %d slots, want 0", n)
		}
		f.claimNone()
	})
	t.Run("Finished", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, p := range []driver.JobFinishParams{
			{Outcome: queue.OutcomeCompleted},
			{Outcome: queue.OutcomeFailed, Error: "bad"},
		} {
			f.enqueue("a")
			j := f.claimOne()
			p.Lease = j.Lease()
			if err := f.finish(&p); err != nil {
				t.Fatalf("finish: %v", err)
			}
			before := f.get(j.ID)
			_, err := f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: j.ID})
			wantErr(t, "cancel a "+string(before.State)+" job", err, queue.ErrConflict)
			unchanged(t, before, f.get(j.ID))
		}
		j := f.enqueue("a")
		f.cancel(&driver.JobCancelParams{ID: j.ID})
		_, err := f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: j.ID})
		wantErr(t, "cancel a cancelled job", err, queue.ErrConflict)
	})
	t.Run("TenantScope", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		j := f.enqueue("a")
		_, err := f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: j.ID, TenantID: "b"})
		wantErr(t, "cancel another tenant's job", err, queue.ErrNotFound)
		f.wantState(j.ID, queue.StatePending)
		_, err = f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: j.ID + 100})
		wantErr(t, "cancel a missing job", err, queue.ErrNotFound)
		f.cancel(&driver.JobCancelParams{ID: j.ID, TenantID: "a"})
	})
	t.Run("Discard", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, reason, want string
			running            bool
		}{
			{"Pending", "poison", "poison", false},
			{"DefaultReason", "", "discarded", false},
			{"Running", "poison", "poison", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				j := f.enqueue("a")
				next := f.enqueue("a")
				if tc.running {
					j = f.claimOne()
				}
				got := f.cancel(&driver.JobCancelParams{ID: j.ID, Discard: true, Reason: tc.reason})
				if got.State != queue.StateFailed || got.ErrorMessage != tc.want || got.CompletedAt.IsZero() {
					t.Fatalf("discarded %+v, want failed with %q", got, tc.want)
				}
				f.wantState(j.ID, queue.StateFailed)
				if tc.running {
					wantErr(t, "finish after discard",
						f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}), queue.ErrLeaseLost)
					f.claimNone()
					if n := f.releaseSlots(j.Lease()); n != 1 {
						t.Fatalf("JobSlotRelease freed %d slots, want 1", n)
					}
				}
				if c := f.claimOne(); c.ID != next.ID {
					t.Fatalf("claimed %s, want the tenant's next job %d", describe(c), next.ID)
				}
			})
		}
	})
}

func (s *suite) testJobRetry(t *testing.T) {
	t.Run("Failed", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		p := params("a")
		p.Priority, p.MaxAttempts = 7, 2
		p.Kind = "ocr"
		f.insert(p)
		j := f.claimOne()
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeFailed, Error: "bad"}); err != nil {
			t.Fatalf("fail: %v", err)
		}
		before := f.get(j.ID)
		r := f.retry(&driver.JobRetryParams{ID: j.ID, TenantID: "a"})
		if r.ID == j.ID || r.RetryOf != j.ID || r.State != queue.StatePending || r.Attempt != 0 || r.ErrorMessage != "" ||
			r.Queue != p.Queue || r.Kind != p.Kind || r.TenantID != p.TenantID || r.Priority != 7 || r.MaxAttempts != 2 {
			t.Fatalf("retry job %+v: want a new pending job of the same kind, tenant and settings, RetryOf %d", r, j.ID)
		}
		sameJSON(t, "Args", r.Args, p.Args)
		if g := f.get(r.ID); g.RetryOf != j.ID || g.State != queue.StatePending {
			t.Fatalf("stored retry job %+v", g)
		}
		unchanged(t, before, f.get(j.ID))
		if n := len(f.attempts(j.ID)); n != 1 {
			t.Fatalf("original has %d attempt records, want 1", n)
		}
		if c := f.claimOne(); c.ID != r.ID || c.Attempt != 1 {
			t.Fatalf("claimed %s, want the retry job %d at attempt 1", describe(c), r.ID)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		j := f.enqueue("a")
		f.cancel(&driver.JobCancelParams{ID: j.ID})
		if r := f.retry(&driver.JobRetryParams{ID: j.ID}); r.RetryOf != j.ID || r.State != queue.StatePending {
			t.Fatalf("retry of a cancelled job: %+v", r)
		}
		f.wantState(j.ID, queue.StateCancelled)
	})
	t.Run("Conflict", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		running := f.claimOne()
		completed := f.enqueue("b")
		f.complete(f.claimOne())
		pending := f.enqueue("b")
		p := params("c")
		p.RunAt = time.Now().Add(time.Hour)
		scheduled := f.insert(p)[0].Job
		for _, j := range []*queue.Job{running, completed, pending, scheduled} {
			before := f.get(j.ID)
			_, err := f.x.JobRetry(f.ctx, &driver.JobRetryParams{ID: j.ID})
			wantErr(t, "retry a "+string(before.State)+" job", err, queue.ErrConflict)
			unchanged(t, before, f.get(j.ID))
		}
		if jobs := f.list(&queue.JobListParams{}); len(jobs) != 4 {
			t.Fatalf("%d jobs after refused retries, want 4", len(jobs))
		}
	})
	t.Run("TenantScope", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		j := f.enqueue("a")
		f.cancel(&driver.JobCancelParams{ID: j.ID})
		_, err := f.x.JobRetry(f.ctx, &driver.JobRetryParams{ID: j.ID, TenantID: "b"})
		wantErr(t, "retry another tenant's job", err, queue.ErrNotFound)
		_, err = f.x.JobRetry(f.ctx, &driver.JobRetryParams{ID: j.ID + 100})
		wantErr(t, "retry a missing job", err, queue.ErrNotFound)
		if jobs := f.list(&queue.JobListParams{}); len(jobs) != 1 {
			t.Fatalf("%d jobs after refused retries, want 1", len(jobs))
		}
	})
}

func (f *fixture) cancel(p *driver.JobCancelParams) *queue.Job {
	f.t.Helper()
	j, err := f.x.JobCancel(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobCancel(%+v): %v", p, err)
	}
	return j
}

func (f *fixture) retry(p *driver.JobRetryParams) *queue.Job {
	f.t.Helper()
	j, err := f.x.JobRetry(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobRetry(%+v): %v", p, err)
	}
	return j
}

// releaseSlots frees the slots the attempts of leases still hold and
// returns how many it freed.
func (f *fixture) releaseSlots(leases ...queue.Lease) int {
	f.t.Helper()
	n, err := f.x.JobSlotRelease(f.ctx, leases)
	if err != nil {
		f.t.Fatalf("JobSlotRelease(%v): %v", leases, err)
	}
	return n
}
