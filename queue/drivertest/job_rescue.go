package drivertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// timedOutMessage is the error of a job failed by the rescue sweep.
const timedOutMessage = "Processing timed out"

func (s *suite) testJobRescue(t *testing.T) {
	t.Run("BackToPending", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		next := f.enqueue("a")
		j := f.claim(testQueue, 1, shortLease)[0]
		got := f.rescueUntil(j.ID)[j.ID]
		for _, r := range []*queue.Job{got, f.get(j.ID)} {
			if r.State != queue.StatePending || r.Attempt != 1 || r.LeaseToken != 0 || r.ErrorMessage != "" {
				t.Fatalf("rescued %+v: want pending, attempt 1 kept, no lease, no error", r)
			}
		}
		wantAttempts(t, f.attempts(j.ID), attemptWant{1, queue.OutcomeTimedOut, anyError})
		// Same id, so its place in the tenant's queue: it runs before next.
		again := f.claimOne()
		if again.ID != j.ID || again.Attempt != 2 {
			t.Fatalf("after rescue claimed %s, want job %d attempt 2 (before job %d)", describe(again), j.ID, next.ID)
		}
	})
	t.Run("Fails", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name          string
			maxAttempts   int
			failOnTimeout bool
		}{
			{"AttemptsExhausted", 1, false},
			{"FailOnTimeout", 3, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				p := params("a")
				p.MaxAttempts, p.FailOnTimeout = tc.maxAttempts, tc.failOnTimeout
				f.insert(p)
				next := f.enqueue("a")
				j := f.claim(testQueue, 1, shortLease)[0]
				before := time.Now()
				got := f.rescueUntil(j.ID)[j.ID]
				for _, r := range []*queue.Job{got, f.get(j.ID)} {
					if r.State != queue.StateFailed || r.ErrorMessage != timedOutMessage || r.Attempt != 1 {
						t.Fatalf("rescued %+v: want failed %q at attempt 1", r, timedOutMessage)
					}
					near(t, "CompletedAt", r.CompletedAt, before)
				}
				wantAttempts(t, f.attempts(j.ID), attemptWant{1, queue.OutcomeTimedOut, anyError})
				if c := f.claimOne(); c.ID != next.ID {
					t.Fatalf("claimed %s, want the tenant's next job %d (slot freed)", describe(c), next.ID)
				}
			})
		}
	})
	t.Run("NotExpired", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		f.claimOne()
		if got := f.rescue(100); len(got) != 0 {
			t.Fatalf("rescued %d jobs with live leases", len(got))
		}
	})
	t.Run("HeartbeatKeepsAlive", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		// Heartbeats every 100ms keep a 1s lease for 2.5 leases' time: only
		// a stall of 900ms, not a slow store, could lose it.
		lease := time.Second
		j := f.claim(testQueue, 1, lease)[0]
		end := time.Now().Add(5 * lease / 2)
		for time.Now().Before(end) {
			if got := f.heartbeat(lease, j.Lease()); len(got) != 1 {
				t.Fatalf("heartbeat lost the lease of a live job")
			}
			if got := f.rescue(100); len(got) != 0 {
				t.Fatalf("rescued %s while its lease was kept alive", describe(got[0]))
			}
			time.Sleep(lease / 10) // the heartbeat interval
		}
		f.wantState(j.ID, queue.StateRunning)
		f.complete(j)
	})
	t.Run("Limit", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, tenant := range []string{"a", "b", "c"} {
			f.enqueue(tenant)
		}
		jobs := f.claim(testQueue, 3, shortLease)
		if len(jobs) != 3 {
			t.Fatalf("claimed %d, want 3", len(jobs))
		}
		var last time.Time
		for _, j := range jobs {
			if j.LeaseExpiresAt.After(last) {
				last = j.LeaseExpiresAt
			}
		}
		waitPast(last)
		rescued, calls := 0, 0
		eventually(t, "all three rescued", func() bool {
			got := f.rescue(2)
			if len(got) > 2 {
				t.Fatalf("JobRescue with Limit 2 rescued %d", len(got))
			}
			if len(got) > 0 {
				calls++
			}
			rescued += len(got)
			return rescued >= 3
		})
		if rescued != 3 || calls < 2 {
			t.Fatalf("rescued %d in %d sweeps, want 3 in at least 2", rescued, calls)
		}
	})
}

func (f *fixture) rescue(limit int) []*queue.Job {
	f.t.Helper()
	jobs, err := f.x.JobRescue(f.ctx, &driver.JobRescueParams{Limit: limit})
	if err != nil {
		f.t.Fatalf("JobRescue: %v", err)
	}
	return jobs
}

// anyError in an attemptWant accepts any error text.
const anyError = "\x00any"

type attemptWant struct {
	attempt int
	outcome queue.Outcome
	err     string
}

// wantAttempts fails t unless the attempt records match want, in order.
func wantAttempts(t *testing.T, got []*queue.Attempt, want ...attemptWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d attempt records, want %d: %s", len(got), len(want), attemptsString(got))
	}
	for i, w := range want {
		a := got[i]
		if a.Attempt != w.attempt || a.Outcome != w.outcome || (w.err != anyError && a.Error != w.err) {
			t.Fatalf("attempt record %d is (%d, %s, %q), want (%d, %s, %q)",
				i, a.Attempt, a.Outcome, a.Error, w.attempt, w.outcome, w.err)
		}
		if a.StartedAt.IsZero() || a.FinishedAt.Before(a.StartedAt) {
			t.Fatalf("attempt record %d runs from %v to %v", i, a.StartedAt, a.FinishedAt)
		}
	}
}

func attemptsString(as []*queue.Attempt) string {
	s := "["
	for _, a := range as {
		s += fmt.Sprintf(" %d:%s(%q)", a.Attempt, a.Outcome, a.Error)
	}
	return s + " ]"
}
