package drivertest

import (
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobSchedule(t *testing.T) {
	t.Run("DueOnly", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		lp := params("b")
		lp.RunAt = time.Now().Add(time.Hour)
		later := f.insert(lp)[0].Job
		soon, runAt := f.insertSoon(params("a"))
		waitPast(runAt)
		moved := 0
		eventually(t, "the due job moved", func() bool {
			moved += f.schedule(100)
			return moved >= 1
		})
		if moved != 1 {
			t.Fatalf("moved %d jobs, want 1", moved)
		}
		f.wantState(soon[0].ID, queue.StatePending)
		f.wantState(later.ID, queue.StateScheduled)
		if n := f.schedule(100); n != 0 {
			t.Fatalf("second sweep moved %d, want 0", n)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		_, runAt := f.insertSoon(params("a"), params("a"), params("a"))
		waitPast(runAt)
		moved, sweeps := 0, 0
		eventually(t, "three jobs moved", func() bool {
			n := f.schedule(2)
			if n > 2 {
				t.Fatalf("JobSchedule with Limit 2 moved %d", n)
			}
			if n > 0 {
				sweeps++
			}
			moved += n
			return moved >= 3
		})
		if moved != 3 || sweeps < 2 {
			t.Fatalf("moved %d in %d sweeps, want 3 in at least 2", moved, sweeps)
		}
	})
	t.Run("RetryBackoff", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeRetry, Error: "e", RetryIn: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("finish retry: %v", err)
		}
		f.claimNone()
		waitPast(f.wantState(j.ID, queue.StateScheduled).RunAt)
		eventually(t, "the retry moved", func() bool { return f.schedule(10) == 1 })
		if c := f.claimOne(); c.ID != j.ID || c.Attempt != 2 {
			t.Fatalf("claimed %s, want job %d attempt 2", describe(c), j.ID)
		}
	})
}

func (s *suite) testJobDeleteFinished(t *testing.T) {
	t.Run("Ages", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("c")
		completed := f.claimOne()
		f.complete(completed)
		f.enqueue("f")
		failed := f.claimOne()
		if err := f.finish(&driver.JobFinishParams{Lease: failed.Lease(), Outcome: queue.OutcomeFailed, Error: "x"}); err != nil {
			t.Fatalf("fail: %v", err)
		}
		cancelled := f.enqueue("x")
		f.cancel(&driver.JobCancelParams{ID: cancelled.ID})
		f.enqueue("r")
		running := f.claimOne()
		pending := f.enqueue("p")
		sched := params("s")
		sched.RunAt = time.Now().Add(time.Hour)
		scheduled := f.insert(sched)[0].Job

		const keep, short = time.Hour, 20 * time.Millisecond
		if n := f.deleteFinished(keep, keep, keep, 100); n != 0 {
			t.Fatalf("deleted %d jobs younger than an hour", n)
		}
		for _, step := range []struct {
			name   string
			ages   [3]time.Duration
			victim int64
		}{
			{"completed", [3]time.Duration{short, keep, keep}, completed.ID},
			{"failed", [3]time.Duration{keep, short, keep}, failed.ID},
			{"cancelled", [3]time.Duration{keep, keep, short}, cancelled.ID},
		} {
			deleted := 0
			eventually(t, "the "+step.name+" job deleted", func() bool {
				deleted += f.deleteFinished(step.ages[0], step.ages[1], step.ages[2], 100)
				return deleted >= 1
			})
			if deleted != 1 {
				t.Fatalf("deleted %d jobs with a short %s age, want 1", deleted, step.name)
			}
			f.wantGone(step.victim)
		}
		for _, id := range []int64{running.ID, pending.ID, scheduled.ID} {
			f.get(id)
		}
		if n := f.deleteFinished(time.Nanosecond, time.Nanosecond, time.Nanosecond, 100); n != 0 {
			t.Fatalf("deleted %d unfinished jobs", n)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		f.enqueueN("a", 3)
		for _, j := range f.claim(testQueue, 3, longLease) {
			f.complete(j)
		}
		deleted, sweeps := 0, 0
		eventually(t, "three jobs deleted", func() bool {
			n := f.deleteFinished(time.Millisecond, time.Hour, time.Hour, 2)
			if n > 2 {
				t.Fatalf("JobDeleteFinished with Limit 2 deleted %d", n)
			}
			if n > 0 {
				sweeps++
			}
			deleted += n
			return deleted >= 3
		})
		if deleted != 3 || sweeps < 2 {
			t.Fatalf("deleted %d in %d sweeps, want 3 in at least 2", deleted, sweeps)
		}
	})
}

func (f *fixture) deleteFinished(completed, failed, cancelled time.Duration, limit int) int {
	f.t.Helper()
	n, err := f.x.JobDeleteFinished(f.ctx, &driver.JobDeleteFinishedParams{
		CompletedAge: completed, FailedAge: failed, CancelledAge: cancelled, Limit: limit,
	})
	if err != nil {
		f.t.Fatalf("JobDeleteFinished: %v", err)
	}
	return n
}

// wantGone fails t unless a job and its attempt records are deleted.
func (f *fixture) wantGone(id int64) {
	f.t.Helper()
	_, err := f.x.JobGet(f.ctx, id)
	wantErr(f.t, "JobGet of a deleted job", err, queue.ErrNotFound)
	as, err := f.x.JobAttempts(f.ctx, id)
	if err != nil && !errors.Is(err, queue.ErrNotFound) {
		f.t.Fatalf("JobAttempts of a deleted job: %v", err)
	}
	if len(as) != 0 {
		f.t.Fatalf("deleted job %d kept %d attempt records", id, len(as))
	}
}

func (s *suite) testLeader(t *testing.T) {
	t.Run("Exclusive", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.wantLeader("maint", "a", time.Hour, true)
		f.wantLeader("maint", "b", time.Hour, false)
		f.wantLeader("maint", "a", time.Hour, true) // renews
		f.wantLeader("maint", "b", time.Hour, false)
		f.wantLeader("cron", "b", time.Hour, true) // names are independent
		f.resign("maint", "b")                     // not the leader: no effect
		f.wantLeader("maint", "b", time.Hour, false)
		f.resign("maint", "a")
		f.wantLeader("maint", "b", time.Hour, true)
		f.wantLeader("maint", "a", time.Hour, false)
	})
	t.Run("ReelectAfterTTL", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.wantLeader("maint", "a", 100*time.Millisecond, true)
		eventually(t, "b elected after a's TTL", func() bool { return f.leader("maint", "b", time.Hour) })
		f.wantLeader("maint", "a", time.Hour, false)
	})
	t.Run("RenewKeeps", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		ttl := time.Second
		end := time.Now().Add(5 * ttl / 2)
		for time.Now().Before(end) {
			f.wantLeader("maint", "a", ttl, true)
			f.wantLeader("maint", "b", ttl, false)
			time.Sleep(ttl / 10) // the renewal interval
		}
	})
}

func (f *fixture) leader(name, id string, ttl time.Duration) bool {
	f.t.Helper()
	ok, err := f.x.LeaderAttempt(f.ctx, &driver.LeaderParams{Name: name, LeaderID: id, TTL: ttl})
	if err != nil {
		f.t.Fatalf("LeaderAttempt(%s, %s): %v", name, id, err)
	}
	return ok
}

func (f *fixture) wantLeader(name, id string, ttl time.Duration, want bool) {
	f.t.Helper()
	if got := f.leader(name, id, ttl); got != want {
		f.t.Fatalf("LeaderAttempt(%s, %s) = %v, want %v", name, id, got, want)
	}
}

func (f *fixture) resign(name, id string) {
	f.t.Helper()
	if err := f.x.LeaderResign(f.ctx, &driver.LeaderParams{Name: name, LeaderID: id}); err != nil {
		f.t.Fatalf("LeaderResign(%s, %s): %v", name, id, err)
	}
}

func (s *suite) testQueueStats(t *testing.T) {
	t.Run("Counts", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		if st := f.stats(testQueue); st.Queue != testQueue || len(nonZero(st.Counts)) != 0 {
			t.Fatalf("empty queue stats %+v", st)
		}
		f.enqueue("c")
		f.complete(f.claimOne())
		f.enqueue("f")
		j := f.claimOne()
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeFailed, Error: "x"}); err != nil {
			t.Fatalf("fail: %v", err)
		}
		f.enqueue("r")
		f.claimOne()
		f.cancel(&driver.JobCancelParams{ID: f.enqueue("x").ID})
		p := params("s")
		p.RunAt = time.Now().Add(time.Hour)
		f.insert(p)
		f.enqueueN("p", 2)
		o := params("o")
		o.Queue = otherQueue
		f.insert(o, o, o)

		st := f.stats(testQueue)
		want := map[queue.State]int{
			queue.StateScheduled: 1, queue.StatePending: 2, queue.StateRunning: 1,
			queue.StateCompleted: 1, queue.StateFailed: 1, queue.StateCancelled: 1,
		}
		for state, n := range want {
			if st.Counts[state] != n {
				t.Fatalf("stats %v, want %v", st.Counts, want)
			}
		}
		if len(nonZero(st.Counts)) != len(want) {
			t.Fatalf("stats %v, want %v", st.Counts, want)
		}
		if st.OldestPendingAge < 0 || st.OldestPendingAge > time.Minute {
			t.Fatalf("OldestPendingAge %v, want a few milliseconds", st.OldestPendingAge)
		}
		if st := f.stats(otherQueue); st.Counts[queue.StatePending] != 3 {
			t.Fatalf("%s stats %v, want 3 pending", otherQueue, st.Counts)
		}
	})
}

func (f *fixture) stats(q string) *queue.QueueStats {
	f.t.Helper()
	st, err := f.x.QueueStats(f.ctx, q)
	if err != nil {
		f.t.Fatalf("QueueStats(%s): %v", q, err)
	}
	return st
}

func nonZero(m map[queue.State]int) map[queue.State]int {
	out := make(map[queue.State]int)
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
