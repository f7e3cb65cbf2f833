package drivertest

import (
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobPosition(t *testing.T) {
	t.Run("Ahead", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a := f.enqueueN("a", 4)
		b := f.enqueueN("b", 2)
		p := params("a")
		p.Queue = otherQueue
		f.insert(p, p)
		f.wantAhead(a[0].ID, 0)
		f.wantAhead(a[3].ID, 3)
		f.wantAhead(b[1].ID, 1)

		urgent := params("a")
		urgent.Priority = 10
		u := f.insert(urgent)[0].Job
		f.wantAhead(u.ID, 0)
		f.wantAhead(a[0].ID, 1)
		f.wantAhead(a[3].ID, 4)

		later := params("a")
		later.RunAt = time.Now().Add(time.Hour)
		later.Priority = 100
		sched := f.insert(later)[0].Job
		f.wantAhead(sched.ID, 5) // every pending job of the tenant and queue
		f.wantAhead(u.ID, 0)     // scheduled jobs are not ahead of anyone
	})
	t.Run("RunningAndLimit", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		a := f.enqueueN("a", 3)
		f.enqueue("b")
		f.wantPosition(a[1].ID, driver.Position{Ahead: 1, Running: 0, Limit: 1})
		f.claim(testQueue, 10, longLease) // a[0] and b
		f.wantPosition(a[1].ID, driver.Position{Ahead: 0, Running: 1, Limit: 1})
		f.tenantLimit("a", testQueue, 3)
		f.wantPosition(a[2].ID, driver.Position{Ahead: 1, Running: 1, Limit: 3})
		f.queueConfig(testQueue, 2)
		b2 := f.enqueue("b")
		f.wantPosition(b2.ID, driver.Position{Ahead: 0, Running: 1, Limit: 2})
	})
	t.Run("Conflict", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		running := f.claimOne()
		done := f.enqueue("b")
		f.complete(f.claimOne())
		cancelled := f.enqueue("c")
		f.cancel(&driver.JobCancelParams{ID: cancelled.ID})
		for _, j := range []*queue.Job{running, done, cancelled} {
			_, err := f.x.JobPosition(f.ctx, j.ID)
			wantErr(t, "position of a "+string(f.get(j.ID).State)+" job", err, queue.ErrConflict)
		}
		_, err := f.x.JobPosition(f.ctx, cancelled.ID+100)
		wantErr(t, "position of a missing job", err, queue.ErrNotFound)
	})
	t.Run("AvgDuration", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		jobs := f.enqueueN("a", 4)
		last := jobs[3].ID
		if p := f.position(last); p.AvgDuration != 0 {
			t.Fatalf("AvgDuration %v before any job completed, want 0 (unknown)", p.AvgDuration)
		}
		for range 3 {
			j := f.claimOne()
			waitPast(j.StartedAt.Add(10 * time.Millisecond)) // the job's run time
			f.complete(j)
		}
		if p := f.position(last); p.AvgDuration <= 0 || p.AvgDuration > time.Minute {
			t.Fatalf("AvgDuration %v after three jobs of ~10ms, want > 0", p.AvgDuration)
		}
	})
}

func (f *fixture) position(id int64) *driver.Position {
	f.t.Helper()
	p, err := f.x.JobPosition(f.ctx, id)
	if err != nil {
		f.t.Fatalf("JobPosition(%d): %v", id, err)
	}
	return p
}

func (f *fixture) wantAhead(id int64, ahead int) {
	f.t.Helper()
	if p := f.position(id); p.Ahead != ahead {
		f.t.Fatalf("job %d: %d ahead, want %d", id, p.Ahead, ahead)
	}
}

func (f *fixture) wantPosition(id int64, want driver.Position) {
	f.t.Helper()
	p := f.position(id)
	if p.Ahead != want.Ahead || p.Running != want.Running || p.Limit != want.Limit {
		f.t.Fatalf("job %d position %+v, want Ahead %d, Running %d, Limit %d", id, p, want.Ahead, want.Running, want.Limit)
	}
}
