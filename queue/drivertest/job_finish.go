package drivertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobFinish(t *testing.T) {
	t.Run("Outcome", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name     string
			p        driver.JobFinishParams
			state    queue.State
			attempt  int           // Job.Attempt after the finish
			errMsg   string        // Job.ErrorMessage after the finish
			runIn    time.Duration // for scheduled: RunAt from now
			finished bool          // CompletedAt set
		}{
			{"Completed", driver.JobFinishParams{Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`{"pages": 3}`)},
				queue.StateCompleted, 1, "", 0, true},
			{"RetryNow", driver.JobFinishParams{Outcome: queue.OutcomeRetry, Error: "boom"},
				queue.StatePending, 1, "boom", 0, false},
			{"RetryLater", driver.JobFinishParams{Outcome: queue.OutcomeRetry, Error: "boom", RetryIn: time.Hour},
				queue.StateScheduled, 1, "boom", time.Hour, false},
			{"Failed", driver.JobFinishParams{Outcome: queue.OutcomeFailed, Error: "bad input"},
				queue.StateFailed, 1, "bad input", 0, true},
			{"Snoozed", driver.JobFinishParams{Outcome: queue.OutcomeSnoozed, RetryIn: time.Hour},
				queue.StateScheduled, 0, "", time.Hour, false},
			{"Released", driver.JobFinishParams{Outcome: queue.OutcomeReleased},
				queue.StatePending, 0, "", 0, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				f.enqueue("a")
				next := f.enqueue("a")
				j := f.claimOne()
				f.progress(j.Lease(), "parsing", 30, "half way")
				p := tc.p
				p.Lease, p.WorkerID = j.Lease(), workerID
				before := time.Now()
				if err := f.finish(&p); err != nil {
					t.Fatalf("finish %s: %v", tc.name, err)
				}
				got := f.get(j.ID)
				if got.State != tc.state || got.Attempt != tc.attempt || got.ErrorMessage != tc.errMsg || got.LeaseToken != 0 {
					t.Fatalf("after %s: %+v; want state %s, attempt %d, error %q, no lease",
						tc.name, got, tc.state, tc.attempt, tc.errMsg)
				}
				if tc.finished {
					near(t, "CompletedAt", got.CompletedAt, before)
				} else if !got.CompletedAt.IsZero() {
					t.Fatalf("CompletedAt = %v for an unfinished job", got.CompletedAt)
				}
				if tc.runIn > 0 {
					near(t, "RunAt", got.RunAt, before.Add(tc.runIn))
				}
				if tc.state == queue.StateCompleted {
					if got.Progress != 100 {
						t.Fatalf("completed with progress %d, want 100", got.Progress)
					}
					sameJSON(t, "Result", got.Result, tc.p.Result)
				}
				as := f.attempts(j.ID)
				wantAttempts(t, as, attemptWant{1, tc.p.Outcome, tc.p.Error})
				if as[0].WorkerID != workerID {
					t.Fatalf("attempt record worker %q, want %q", as[0].WorkerID, workerID)
				}
				near(t, "attempt FinishedAt", as[0].FinishedAt, before)
				// The slot is free: the tenant's first pending job starts.
				c := f.claimOne()
				switch {
				case tc.state == queue.StatePending && (c.ID != j.ID || c.Attempt != tc.attempt+1):
					t.Fatalf("claimed %s, want job %d again at attempt %d", describe(c), j.ID, tc.attempt+1)
				case tc.state != queue.StatePending && c.ID != next.ID:
					t.Fatalf("claimed %s, want the tenant's next job %d", describe(c), next.ID)
				}
			})
		}
	})
	t.Run("Batch", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, tenant := range []string{"a", "b", "c"} {
			f.enqueue(tenant)
		}
		jobs := f.claim(testQueue, 3, longLease)
		if len(jobs) != 3 {
			t.Fatalf("claimed %d, want 3", len(jobs))
		}
		a, b, c := jobs[0], jobs[1], jobs[2]
		f.complete(b)
		forged := c.Lease()
		forged.Token++
		ps := []*driver.JobFinishParams{
			{Lease: a.Lease(), Outcome: queue.OutcomeCompleted},
			{Lease: b.Lease(), Outcome: queue.OutcomeFailed, Error: "late"},
			{Lease: forged, Outcome: queue.OutcomeCompleted},
			{Lease: c.Lease(), Outcome: queue.OutcomeFailed, Error: "bad"},
			{Lease: a.Lease(), Outcome: queue.OutcomeFailed, Error: "twice"},
		}
		errs, err := f.x.JobFinish(f.ctx, ps)
		if err != nil {
			t.Fatalf("JobFinish: %v", err)
		}
		if len(errs) != len(ps) {
			t.Fatalf("%d results for %d params", len(errs), len(ps))
		}
		for i, lost := range []bool{false, true, true, false, true} {
			if lost {
				wantErr(t, "finish with a lost lease", errs[i], queue.ErrLeaseLost)
			} else if errs[i] != nil {
				t.Fatalf("finish %d with a held lease: %v", i, errs[i])
			}
		}
		f.wantState(a.ID, queue.StateCompleted)
		f.wantState(b.ID, queue.StateCompleted)
		if j := f.wantState(c.ID, queue.StateFailed); j.ErrorMessage != "bad" {
			t.Fatalf("job c error %q, want %q", j.ErrorMessage, "bad")
		}
		for _, j := range jobs {
			if n := len(f.attempts(j.ID)); n != 1 {
				t.Fatalf("job %d has %d attempt records, want 1", j.ID, n)
			}
		}
		if errs, err := f.x.JobFinish(f.ctx, nil); err != nil || len(errs) != 0 {
			t.Fatalf("empty JobFinish: %v, %v", errs, err)
		}
	})
	t.Run("AttemptHistory", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		steps := []driver.JobFinishParams{
			{Outcome: queue.OutcomeRetry, Error: "e1"},
			{Outcome: queue.OutcomeReleased},
			{Outcome: queue.OutcomeRetry, Error: "e2"},
			{Outcome: queue.OutcomeFailed, Error: "e3"},
		}
		for i, p := range steps {
			if i > 0 {
				j = f.claimOne()
			}
			p.Lease = j.Lease()
			if err := f.finish(&p); err != nil {
				t.Fatalf("finish %d: %v", i, err)
			}
		}
		wantAttempts(t, f.attempts(j.ID),
			attemptWant{1, queue.OutcomeRetry, "e1"}, attemptWant{2, queue.OutcomeReleased, ""},
			attemptWant{2, queue.OutcomeRetry, "e2"}, attemptWant{3, queue.OutcomeFailed, "e3"})
		if got := f.wantState(j.ID, queue.StateFailed); got.Attempt != 3 {
			t.Fatalf("failed at attempt %d, want 3", got.Attempt)
		}
	})
	t.Run("AttemptHistoryCompleted", func(t *testing.T) {
		// A store may keep the attempt that completes a job in the job's
		// row (PostgreSQL does): the history reads the same.
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeRetry, Error: "e1", WorkerID: "w1"}); err != nil {
			t.Fatalf("retry: %v", err)
		}
		j = f.claimOne()
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w2"}); err != nil {
			t.Fatalf("complete: %v", err)
		}
		done := f.wantState(j.ID, queue.StateCompleted)
		as := f.attempts(j.ID)
		wantAttempts(t, as, attemptWant{1, queue.OutcomeRetry, "e1"}, attemptWant{2, queue.OutcomeCompleted, ""})
		last := as[1]
		if last.WorkerID != "w2" || !last.StartedAt.Equal(j.StartedAt) || !last.FinishedAt.Equal(done.CompletedAt) {
			t.Fatalf("completing attempt %+v; want worker w2, started %v, finished %v", last, j.StartedAt, done.CompletedAt)
		}
		if as[0].WorkerID != "w1" {
			t.Fatalf("first attempt's worker %q, want w1", as[0].WorkerID)
		}
	})
}
