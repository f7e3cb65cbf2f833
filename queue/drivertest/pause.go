package drivertest

import (
	"slices"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// testPause checks QueuePauseSet, TenantPauseSet and PauseList: a paused
// queue or tenant gets no claims, everything else goes on, and a resume
// starts claiming where it stopped, in order.
func (s *suite) testPause(t *testing.T) {
	t.Run("QueueStopsClaims", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a := f.enqueueN("a", 2)
		b := f.enqueueN("b", 2)
		other := f.insertIn(otherQueue)
		f.pauseQueue(testQueue, true)
		f.claimNone()
		// Enqueues still succeed; other queues are served.
		late := f.enqueue("c")
		if got := f.claim(otherQueue, 10, longLease); len(got) != 1 || got[0].ID != other.ID {
			t.Fatalf("claim of the other queue got %v, want job %d", ids(got), other.ID)
		}
		st, err := f.x.QueueStats(f.ctx, testQueue)
		if err != nil {
			t.Fatalf("QueueStats: %v", err)
		}
		if !st.Paused || st.Counts[queue.StatePending] != 5 {
			t.Fatalf("QueueStats: paused %v, %d pending; want paused, 5 pending", st.Paused, st.Counts[queue.StatePending])
		}
		if pos := f.position(late.ID); !pos.Paused {
			t.Fatalf("position of a job of a paused queue: %+v, want Paused", pos)
		}
		f.pauseQueue(testQueue, false)
		if st, _ := f.x.QueueStats(f.ctx, testQueue); st == nil || st.Paused {
			t.Fatalf("QueueStats after resume: %+v, want not paused", st)
		}
		got := ids(f.claim(testQueue, 10, longLease))
		slices.Sort(got)
		want := []int64{a[0].ID, b[0].ID, late.ID}
		if !slices.Equal(got, want) {
			t.Fatalf("claim after resume got %v, want each tenant's first job %v", got, want)
		}
	})
	t.Run("TenantSkipped", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		a := f.enqueueN("a", 3)
		b := f.enqueueN("b", 3)
		c := f.enqueueN("c", 3)
		f.pauseTenant("b", true)
		// Round-robin goes on over a and c: one each per claim of 2.
		for range 3 {
			round := f.claim(testQueue, 2, longLease)
			if n := tenantsOf(round); len(round) != 2 || n["a"] != 1 || n["c"] != 1 {
				t.Fatalf("claim of 2 with b paused got %s, want one job of a and one of c", describeAll(round))
			}
		}
		f.claimNone()
		pos := f.position(b[2].ID)
		if !pos.Paused || pos.Ahead != 2 {
			t.Fatalf("position of b's third job: %+v, want Paused and 2 ahead", pos)
		}
		if pos := f.position(f.enqueue("a").ID); pos.Paused {
			t.Fatalf("position of a's job: %+v, want not paused", pos)
		}
		f.pauseTenant("b", false)
		if pos := f.position(b[2].ID); pos.Paused {
			t.Fatalf("position after resume: %+v, want not paused", pos)
		}
		// b resumes where it stopped, first job first.
		var order []int64
		for range 3 {
			for _, j := range f.claim(testQueue, 10, longLease) {
				if j.TenantID == "b" {
					order = append(order, j.ID)
				}
			}
		}
		if !slices.Equal(order, ids(b)) {
			t.Fatalf("b's jobs claimed after resume in order %v, want %v", order, ids(b))
		}
		for _, j := range append(a, c...) {
			if f.get(j.ID).State != queue.StateRunning {
				t.Fatalf("job %d of a or c is %s, want running", j.ID, f.get(j.ID).State)
			}
		}
	})
	t.Run("RunningJobsFinish", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueueN("a", 2)
		running := f.claimOne()
		f.pauseTenant("a", true)
		f.pauseQueue(testQueue, true)
		held, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{running.Lease()}, LeaseDuration: longLease})
		if err != nil || len(held) != 1 {
			t.Fatalf("heartbeat of a running job of a paused tenant: %v, %d held; want held", err, len(held))
		}
		if err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: running.Lease(), Stage: "s", Percent: 50}); err != nil {
			t.Fatalf("progress of a running job of a paused tenant: %v", err)
		}
		f.complete(running)
		f.wantState(running.ID, queue.StateCompleted)
		f.claimNone()
		f.pauseQueue(testQueue, false)
		f.claimNone() // the tenant is still paused
		f.pauseTenant("a", false)
		f.claimOne()
	})
	t.Run("UnknownTenantSticks", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.pauseTenant("new", true)
		p := f.pauses()
		if !p.TenantPaused("new") || p.TenantPaused("other") || len(p.Queues) != 0 {
			t.Fatalf("PauseList after pausing tenant new: %+v", p)
		}
		fresh := f.enqueueN("new", 2)
		inOther := params("new")
		inOther.Queue = otherQueue
		f.insert(inOther)
		f.claimNone()
		if got := f.claim(otherQueue, 10, longLease); len(got) != 0 {
			t.Fatalf("claimed %d jobs of the paused tenant in another queue", len(got))
		}
		served := f.enqueue("a")
		if got := f.claimOne(); got.ID != served.ID {
			t.Fatalf("claimed job %d, want %d of tenant a", got.ID, served.ID)
		}
		f.pauseTenant("new", false)
		if f.pauses().TenantPaused("new") {
			t.Fatal("tenant still listed as paused after resume")
		}
		if got := f.claim(testQueue, 10, longLease); !slices.Equal(ids(got), ids(fresh[:1])) {
			t.Fatalf("claim after resume got %v, want %v", ids(got), ids(fresh[:1]))
		}
		if got := f.claim(otherQueue, 10, longLease); len(got) != 1 {
			t.Fatalf("claim of the other queue after resume got %d jobs, want 1", len(got))
		}
	})
	t.Run("UnknownQueueSticks", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.pauseQueue("later", true)
		if p := f.pauses(); !p.QueuePaused("later") || len(p.Tenants) != 0 {
			t.Fatalf("PauseList after pausing queue later: %+v", p)
		}
		j := f.insertIn("later")
		if got := f.claim("later", 10, longLease); len(got) != 0 {
			t.Fatalf("claimed %d jobs of a queue paused before it had any", len(got))
		}
		f.pauseQueue("later", false)
		if got := f.claim("later", 10, longLease); len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("claim after resume got %v, want [%d]", ids(got), j.ID)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.pauseQueue(testQueue, false) // resuming what is not paused
		f.pauseTenant("a", false)
		f.pauseQueue(testQueue, true)
		first := f.pauses().Queues[testQueue]
		f.pauseQueue(testQueue, true)
		f.pauseTenant("a", true)
		f.pauseTenant("a", true)
		p := f.pauses()
		if !p.Queues[testQueue].Equal(first) || len(p.Queues) != 1 || len(p.Tenants) != 1 {
			t.Fatalf("PauseList after pausing twice: %+v (queue first paused at %v)", p, first)
		}
		if first.IsZero() {
			t.Fatal("PauseList gives no time for the paused queue")
		}
		f.pauseQueue(testQueue, false)
		f.pauseTenant("a", false)
		if p := f.pauses(); len(p.Queues)+len(p.Tenants) != 0 {
			t.Fatalf("PauseList after resuming everything: %+v", p)
		}
		f.enqueue("a")
		f.claimOne()
	})
	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		wantErr(t, "pause of queue Bad!", f.x.QueuePauseSet(f.ctx, &driver.QueuePauseParams{Queue: "Bad!", Paused: true}), queue.ErrInvalid)
		wantErr(t, "pause of tenant \"\"", f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{Paused: true}), queue.ErrInvalid)
	})
	t.Run("ResumeNotifies", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		f.pauseQueue("resumed", true)
		f.pauseQueue("resumed", false)
		n.wait(t, driver.TopicInsert, "resumed")
		f.pauseTenant("a", true)
		f.insertIn("tenantq")
		f.pauseTenant("a", false)
		eventually(t, "a second docket_insert of tenantq, from the resume", func() bool {
			return n.count(driver.TopicInsert, "tenantq") >= 2
		})
	})
}

func (f *fixture) pauseQueue(name string, paused bool) {
	f.t.Helper()
	if err := f.x.QueuePauseSet(f.ctx, &driver.QueuePauseParams{Queue: name, Paused: paused}); err != nil {
		f.t.Fatalf("QueuePauseSet(%s, %v): %v", name, paused, err)
	}
}

func (f *fixture) pauseTenant(tenant string, paused bool) {
	f.t.Helper()
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: tenant, Paused: paused}); err != nil {
		f.t.Fatalf("TenantPauseSet(%s, %v): %v", tenant, paused, err)
	}
}

func (f *fixture) pauses() *queue.Pauses {
	f.t.Helper()
	p, err := f.x.PauseList(f.ctx)
	if err != nil {
		f.t.Fatalf("PauseList: %v", err)
	}
	return p
}

func describeAll(jobs []*queue.Job) string {
	out := "["
	for i, j := range jobs {
		if i > 0 {
			out += ", "
		}
		out += describe(j)
	}
	return out + "]"
}
