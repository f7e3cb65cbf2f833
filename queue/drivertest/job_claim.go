package drivertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobClaim(t *testing.T) {
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.claimNone()
	})
	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, p := range []*driver.JobClaimParams{
			{Queue: "", WorkerID: "w", Max: 1, LeaseDuration: time.Minute},
			{Queue: "Bad Name", WorkerID: "w", Max: 1, LeaseDuration: time.Minute},
			{Queue: queue.DefaultQueue, WorkerID: "w", Max: 0, LeaseDuration: time.Minute},
			{Queue: queue.DefaultQueue, WorkerID: "w", Max: 1, LeaseDuration: 0},
		} {
			_, _, err := f.x.JobClaim(f.ctx, p)
			wantErr(t, fmt.Sprintf("JobClaim(queue %q, max %d, lease %s)", p.Queue, p.Max, p.LeaseDuration), err, queue.ErrInvalid)
		}
	})
	t.Run("StartsAttempt", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		f.enqueue("b")
		before := time.Now()
		jobs := f.claim(testQueue, 2, 30*time.Second)
		if len(jobs) != 2 {
			t.Fatalf("claimed %d jobs, want 2", len(jobs))
		}
		if jobs[0].LeaseToken == jobs[1].LeaseToken {
			t.Fatalf("two leases share token %d", jobs[0].LeaseToken)
		}
		for _, j := range jobs {
			for _, got := range []*queue.Job{j, f.get(j.ID)} {
				if got.State != queue.StateRunning || got.Attempt != 1 || got.LeaseToken == 0 || got.WorkerID != workerID ||
					got.Stage != "" || got.Progress != 0 || got.ProgressMessage != "" {
					t.Fatalf("claimed %+v: want running, attempt 1, a token, worker %q, no progress", got, workerID)
				}
				if got.LeaseToken != j.LeaseToken {
					t.Fatalf("stored token %d, claim returned %d", got.LeaseToken, j.LeaseToken)
				}
				near(t, "StartedAt", got.StartedAt, before)
				near(t, "LeaseExpiresAt", got.LeaseExpiresAt, before.Add(30*time.Second))
			}
		}
	})
	t.Run("ResetsProgress", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		f.progress(j.Lease(), "parsing", 40, "page 4")
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeRetry, Error: "boom"}); err != nil {
			t.Fatalf("finish retry: %v", err)
		}
		j2 := f.claimOne()
		if j2.ID != j.ID || j2.Attempt != 2 || j2.Stage != "" || j2.Progress != 0 || j2.ProgressMessage != "" {
			t.Fatalf("second claim %+v: want job %d, attempt 2, progress reset", j2, j.ID)
		}
		if j2.LeaseToken == j.LeaseToken {
			t.Fatal("second attempt reuses the first attempt's token")
		}
	})
	t.Run("OnlyPending", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("running")
		f.claimOne()
		f.enqueue("completed")
		f.complete(f.claimOne())
		cancelled := f.enqueue("cancelled")
		f.cancel(&driver.JobCancelParams{ID: cancelled.ID})
		sched := params("scheduled")
		sched.RunAt = time.Now().Add(time.Hour)
		f.insert(sched)
		pending := f.enqueue("pending")
		jobs := f.claim(testQueue, 10, longLease)
		if len(jobs) != 1 || jobs[0].ID != pending.ID {
			t.Fatalf("claimed %v, want only the pending job %d", ids(jobs), pending.ID)
		}
	})
	t.Run("OtherQueue", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		p := params("a")
		p.Queue = otherQueue
		other := f.insert(p)[0].Job
		f.claimNone()
		mine := f.enqueue("a")
		if got := f.claimOne(); got.ID != mine.ID {
			t.Fatalf("claimed job %d, want %d of the claimed queue", got.ID, mine.ID)
		}
		// The tenant's limit is per queue: its job in another queue starts.
		jobs := f.claim(otherQueue, 10, longLease)
		if len(jobs) != 1 || jobs[0].ID != other.ID {
			t.Fatalf("claimed %v in %s, want [%d]", ids(jobs), otherQueue, other.ID)
		}
	})
	t.Run("FIFO", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		jobs := f.enqueueN("a", 3)
		jobs = append(jobs, f.enqueue("a"), f.enqueue("a"))
		for i, want := range jobs {
			got := f.claimOne()
			if got.ID != want.ID {
				t.Fatalf("claim %d: job %d, want %d (enqueue order)", i, got.ID, want.ID)
			}
			f.complete(got)
		}
		f.claimNone()
	})
	t.Run("Priority", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		prios := []int{0, 5, -1, 5, 0}
		var jobs []*queue.Job
		for _, prio := range prios {
			p := params("a")
			p.Priority = prio
			jobs = append(jobs, f.insert(p)[0].Job)
		}
		for i, idx := range []int{1, 3, 0, 4, 2} {
			got := f.claimOne()
			if got.ID != jobs[idx].ID {
				t.Fatalf("claim %d: job %d (priority %d), want job %d (priority %d)",
					i, got.ID, got.Priority, jobs[idx].ID, prios[idx])
			}
			f.complete(got)
		}
	})
	t.Run("Max", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.tenantLimit("a", testQueue, 10)
		f.enqueueN("a", 5)
		if got := f.claim(testQueue, 3, longLease); len(got) != 3 {
			t.Fatalf("claimed %d of 5 jobs with Max 3, want 3", len(got))
		}
		if got := f.claim(testQueue, 3, longLease); len(got) != 2 {
			t.Fatalf("claimed %d of the 2 left, want 2", len(got))
		}
		f.claimNone()
	})
	t.Run("MaxAcrossTenants", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		for _, tenant := range []string{"a", "b", "c"} {
			f.enqueueN(tenant, 4)
		}
		// Three tenants share Max 5: none gets more than ceil(5/3) = 2.
		got := f.claim(testQueue, 5, longLease)
		if len(got) != 5 {
			t.Fatalf("claimed %d jobs with Max 5 and 12 claimable, want 5", len(got))
		}
		for tenant, n := range tenantsOf(got) {
			if n > 2 {
				t.Fatalf("tenant %s got %d of 5 jobs among 3 tenants, want at most 2", tenant, n)
			}
		}
	})
	t.Run("Scheduled", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		jobs, runAt := f.insertSoon(params("a"))
		j := jobs[0]
		f.claimNone()
		waitPast(runAt)
		f.claimNone() // run_at passed, but only JobSchedule makes it pending
		eventually(t, "JobSchedule to move the job", func() bool { return f.schedule(100) > 0 })
		if got := f.claimOne(); got.ID != j.ID {
			t.Fatalf("claimed job %d, want the scheduled job %d", got.ID, j.ID)
		}
	})
}

func (s *suite) testJobClaimLimits(t *testing.T) {
	t.Run("DefaultOne", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a := f.enqueueN("a", 3)
		f.enqueue("b")
		got := f.claim(testQueue, 10, longLease)
		if n := tenantsOf(got); len(got) != 2 || n["a"] != 1 || n["b"] != 1 {
			t.Fatalf("claimed %v, want one job of each tenant", n)
		}
		f.claimNone()
		f.enqueue("c") // a busy tenant does not block another
		if j := f.claimOne(); j.TenantID != "c" {
			t.Fatalf("claimed %s, want tenant c's job", describe(j))
		}
		for _, j := range got {
			if j.TenantID == "a" {
				f.complete(j)
			}
		}
		if j := f.claimOne(); j.ID != a[1].ID {
			t.Fatalf("after a's job finished, claimed %s, want a's next job %d", describe(j), a[1].ID)
		}
	})
	t.Run("TenantLimitSet", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueueN("a", 4)
		f.tenantLimit("a", testQueue, 2)
		running := f.claim(testQueue, 10, longLease)
		if len(running) != 2 {
			t.Fatalf("limit 2: claimed %d, want 2", len(running))
		}
		f.claimNone()
		f.tenantLimit("a", testQueue, 0) // back to the default, 1
		f.complete(running[0])
		f.claimNone() // one still running: at the default limit
		f.complete(running[1])
		if got := f.claim(testQueue, 10, longLease); len(got) != 1 {
			t.Fatalf("after the override was removed, claimed %d, want 1", len(got))
		}
	})
	t.Run("TenantLimitSetAllQueues", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.tenantLimit("a", "", 3)
		f.enqueueN("a", 4)
		p := params("a")
		p.Queue = otherQueue
		f.insert(p, p, p, p)
		for _, q := range []string{testQueue, otherQueue} {
			if got := f.claim(q, 10, longLease); len(got) != 3 {
				t.Fatalf("queue %s: claimed %d with a limit of 3 in every queue, want 3", q, len(got))
			}
		}
	})
	t.Run("LimitOutOfRange", func(t *testing.T) {
		// PostgreSQL keeps limits as int4: a larger one was refused by pgx
		// with an error no caller could tell from a failure of the store.
		t.Parallel()
		f := s.setup(t)
		for _, n := range []int{-1, driver.MaxLimit + 1} {
			err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", Queue: testQueue, MaxRunning: n})
			if !errors.Is(err, driver.ErrInvalid) {
				t.Errorf("TenantLimitSet(%d) = %v, want driver.ErrInvalid", n, err)
			}
		}
		for _, n := range []int{0, driver.MaxLimit + 1} {
			err := f.x.QueueConfigSet(f.ctx, &driver.QueueConfigParams{Queue: testQueue, DefaultTenantLimit: n})
			if !errors.Is(err, driver.ErrInvalid) {
				t.Errorf("QueueConfigSet(%d) = %v, want driver.ErrInvalid", n, err)
			}
		}
		f.tenantLimit("a", testQueue, driver.MaxLimit)
		f.queueConfig(testQueue, driver.MaxLimit)
		f.enqueueN("a", 3)
		if got := f.claim(testQueue, 10, longLease); len(got) != 3 {
			t.Fatalf("limit %d: claimed %d, want 3", driver.MaxLimit, len(got))
		}
	})
	t.Run("QueueConfigSet", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 3)
		f.tenantLimit("b", testQueue, 1) // an override beats the queue default
		f.enqueueN("a", 5)
		f.enqueueN("b", 5)
		p := params("a")
		p.Queue = otherQueue
		f.insert(p, p)
		got := tenantsOf(f.claim(testQueue, 10, longLease))
		if got["a"] != 3 || got["b"] != 1 {
			t.Fatalf("claimed %v, want a:3 (queue default) b:1 (override)", got)
		}
		f.claimNone()
		if got := f.claim(otherQueue, 10, longLease); len(got) != 1 {
			t.Fatalf("queue %s: claimed %d, want 1 (its default is untouched)", otherQueue, len(got))
		}
	})
}
