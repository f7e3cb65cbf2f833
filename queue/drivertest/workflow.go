package drivertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// spawn inserts steps as children of the running job parent, keyed by
// their names, and returns the results.
func (f *fixture) spawn(parent *queue.Job, names ...string) []queue.InsertResult {
	f.t.Helper()
	res, err := f.x.JobSpawn(f.ctx, spawnParams(parent, names...))
	if err != nil {
		f.t.Fatalf("JobSpawn(%d, %v): %v", parent.ID, names, err)
	}
	if len(res) != len(names) {
		f.t.Fatalf("JobSpawn: %d results for %d children", len(res), len(names))
	}
	return res
}

func spawnParams(parent *queue.Job, names ...string) *driver.JobSpawnParams {
	p := &driver.JobSpawnParams{Lease: parent.Lease()}
	for _, n := range names {
		c := params("someone-else") // the parent's tenant wins
		c.Kind, c.UniqueKey = "step-"+n, driver.StepKey(parent.ID, n)
		p.Children = append(p.Children, c)
	}
	return p
}

// children returns the children of a job.
func (f *fixture) children(id int64) []*queue.Job {
	f.t.Helper()
	jobs, err := f.x.JobChildren(f.ctx, id)
	if err != nil {
		f.t.Fatalf("JobChildren(%d): %v", id, err)
	}
	return jobs
}

// await ends the attempt of a running parent with OutcomeWaiting.
func (f *fixture) await(j *queue.Job) {
	f.t.Helper()
	if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeWaiting, WorkerID: workerID}); err != nil {
		f.t.Fatalf("await children of job %d: %v", j.ID, err)
	}
}

// claimID claims testQueue's next job, which must be job id.
func (f *fixture) claimID(id int64) *queue.Job {
	f.t.Helper()
	j := f.claimOne()
	if j.ID != id {
		f.t.Fatalf("claimed %s, want job %d", describe(j), id)
	}
	return j
}

func (s *suite) testWorkflow(t *testing.T) {
	t.Run("Spawn", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		parent := f.enqueue("a")
		p := f.claimOne()
		res := f.spawn(p, "x", "y")
		for i, r := range res {
			c := r.Job
			if r.Duplicate || c.ParentID != parent.ID || c.TenantID != "a" || c.State != queue.StatePending {
				t.Fatalf("child %d: %s, parent %d, duplicate %v; want a new pending child of job %d in tenant a",
					i, describe(c), c.ParentID, r.Duplicate, parent.ID)
			}
			if got := f.get(c.ID); got.ParentID != parent.ID || got.StepName() != []string{"x", "y"}[i] {
				t.Fatalf("stored child %s: parent %d, step %q", describe(got), got.ParentID, got.StepName())
			}
		}
		got := f.children(parent.ID)
		if len(got) != 2 || got[0].ID != res[0].Job.ID || got[1].ID != res[1].Job.ID {
			t.Fatalf("JobChildren = %v, want %v", ids(got), []int64{res[0].Job.ID, res[1].Job.ID})
		}
		if len(f.children(res[0].Job.ID)) != 0 || f.get(parent.ID).ParentID != 0 {
			t.Fatal("a child has children, or the parent a parent")
		}
		// Spawned again (a later attempt's handler): the same children.
		again := f.spawn(p, "y", "z")
		if !again[0].Duplicate || again[0].Job.ID != res[1].Job.ID || again[1].Duplicate {
			t.Fatalf("spawn again: %+v, want y the existing child and z new", again)
		}
		if n := len(f.children(parent.ID)); n != 3 {
			t.Fatalf("%d children after the second spawn, want 3", n)
		}
	})
	t.Run("SpawnFenced", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		p := f.claimOne()
		f.complete(p)
		_, err := f.x.JobSpawn(f.ctx, spawnParams(p, "x"))
		wantErr(t, "spawn after the parent's attempt ended", err, queue.ErrLeaseLost)
		if n := len(f.children(p.ID)); n != 0 {
			t.Fatalf("a fenced spawn inserted %d children", n)
		}
		stale := *p
		stale.LeaseToken++
		_, err = f.x.JobSpawn(f.ctx, spawnParams(&stale, "x"))
		wantErr(t, "spawn with a wrong token", err, queue.ErrLeaseLost)
	})
	t.Run("AwaitFreesSlot", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t) // limit 1: the children run only once the parent waits
		parent := f.enqueue("a")
		p := f.claimOne()
		kids := f.spawn(p, "x", "y")
		f.claimNone()
		f.await(p)
		w := f.wantState(parent.ID, queue.StateWaiting)
		if w.Attempt != 0 || w.LeaseToken != 0 {
			t.Fatalf("waiting parent: attempt %d, token %d; want 0 (no attempt spent), no lease", w.Attempt, w.LeaseToken)
		}
		wantAttempts(t, f.attempts(parent.ID), attemptWant{1, queue.OutcomeWaiting, ""})
		x := f.claimID(kids[0].Job.ID)
		f.claimNone() // the limit: one running child; the waiting parent holds nothing
		err := f.finish(&driver.JobFinishParams{Lease: x.Lease(), Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`{"n":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		f.wantState(parent.ID, queue.StateWaiting)
		y := f.claimID(kids[1].Job.ID)
		if err := f.finish(&driver.JobFinishParams{Lease: y.Lease(), Outcome: queue.OutcomeFailed, Error: "boom"}); err != nil {
			t.Fatal(err)
		}
		f.wantState(parent.ID, queue.StatePending)
		again := f.claimID(parent.ID)
		if again.Attempt != 1 {
			t.Fatalf("woken parent runs attempt %d, want 1", again.Attempt)
		}
		got := f.children(parent.ID)
		if len(got) != 2 || got[0].State != queue.StateCompleted || string(got[0].Result) != `{"n": 1}` && string(got[0].Result) != `{"n":1}` ||
			got[1].State != queue.StateFailed || got[1].ErrorMessage != "boom" {
			t.Fatalf("children after the wake: %s %s %s, %s %q", describe(got[0]), got[0].Result, describe(got[1]), got[1].State, got[1].ErrorMessage)
		}
	})
	t.Run("AwaitFinishedChildren", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		parent := f.enqueue("a")
		p := f.claimOne()
		x := f.spawn(p, "x")[0].Job
		f.complete(f.claimID(x.ID))
		f.await(p)
		f.wantState(parent.ID, queue.StatePending)
		f.claimID(parent.ID)
	})
	t.Run("AwaitWithoutChildren", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		parent := f.enqueue("a")
		f.await(f.claimOne())
		f.wantState(parent.ID, queue.StatePending)
	})
	t.Run("ChildCancelledOrTimedOut", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		parent := f.enqueue("a")
		p := f.claimOne()
		c := f.spawnOne(p, "x", true)
		d := f.spawnOne(p, "y", false)
		f.await(p)
		f.cancel(&driver.JobCancelParams{ID: d.ID})
		f.wantState(parent.ID, queue.StateWaiting)
		x := f.claim(testQueue, 1, shortLease)
		if len(x) != 1 || x[0].ID != c.ID {
			t.Fatalf("claimed %v, want child %d", ids(x), c.ID)
		}
		waitPast(x[0].LeaseExpiresAt)
		f.rescueUntil(c.ID)
		f.wantState(c.ID, queue.StateFailed)
		f.wantState(parent.ID, queue.StatePending)
		f.claimID(parent.ID)
	})
	t.Run("CancelCascades", func(t *testing.T) {
		t.Parallel()
		for _, waiting := range []bool{false, true} {
			f := s.setup(t)
			f.queueConfig(testQueue, 10)
			parent := f.enqueue("a")
			p := f.claimOne()
			kids := f.spawn(p, "done", "running", "pending")
			f.complete(f.claimID(kids[0].Job.ID))
			running := f.claimID(kids[1].Job.ID)
			if waiting {
				f.await(p)
			}
			// Another tenant's cancel finds no job, and touches no step, in
			// a transaction that then commits.
			tx, err := f.x.Begin(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx.JobCancel(f.ctx, &driver.JobCancelParams{ID: parent.ID, TenantID: "zz"})
			wantErr(t, "cancel naming another tenant", err, queue.ErrNotFound)
			if err := tx.Commit(f.ctx); err != nil {
				t.Fatal(err)
			}
			f.wantState(kids[2].Job.ID, queue.StatePending)
			got := f.cancel(&driver.JobCancelParams{ID: parent.ID, Reason: "stop"})
			if got.State != queue.StateCancelled {
				t.Fatalf("cancelled parent is %s", got.State)
			}
			f.wantState(kids[0].Job.ID, queue.StateCompleted)
			f.wantState(kids[1].Job.ID, queue.StateCancelled)
			f.wantState(kids[2].Job.ID, queue.StateCancelled)
			if held := f.heartbeat(time.Hour, running.Lease()); len(held) != 0 {
				t.Fatal("the running child of a cancelled parent keeps its lease")
			}
			if !waiting {
				_, err := f.x.JobSpawn(f.ctx, spawnParams(p, "late"))
				wantErr(t, "spawn by a cancelled parent", err, queue.ErrLeaseLost)
			}
			f.claimNone()
		}
	})
	t.Run("RetryReopens", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		parent := f.enqueue("a")
		p := f.claimOne()
		kids := f.spawn(p, "ok", "bad")
		f.await(p)
		ok := f.claimID(kids[0].Job.ID)
		bad := f.claimOne()
		f.complete(ok)
		if err := f.finish(&driver.JobFinishParams{Lease: bad.Lease(), Outcome: queue.OutcomeFailed, Error: "boom"}); err != nil {
			t.Fatal(err)
		}
		p = f.claimID(parent.ID)
		if err := f.finish(&driver.JobFinishParams{Lease: p.Lease(), Outcome: queue.OutcomeFailed, Error: "step bad failed"}); err != nil {
			t.Fatal(err)
		}
		got := f.retry(&driver.JobRetryParams{ID: parent.ID})
		if got.ID != parent.ID || got.State != queue.StateWaiting || got.Attempt != 0 || got.ErrorMessage != "" {
			t.Fatalf("retried parent %s, error %q; want job %d re-opened, waiting, attempts reset", describe(got), got.ErrorMessage, parent.ID)
		}
		f.wantState(kids[0].Job.ID, queue.StateCompleted)
		b := f.wantState(kids[1].Job.ID, queue.StatePending)
		if b.Attempt != 0 || b.ErrorMessage != "" || !b.CompletedAt.IsZero() {
			t.Fatalf("re-queued step: %s, error %q, completed %v", describe(b), b.ErrorMessage, b.CompletedAt)
		}
		f.complete(f.claimID(b.ID))
		p = f.claimID(parent.ID)
		again := f.spawn(p, "ok", "bad")
		if !again[0].Duplicate || !again[1].Duplicate || again[0].Job.State != queue.StateCompleted || again[1].Job.State != queue.StateCompleted {
			t.Fatalf("the retried parent's spawn: %+v, want both steps existing and completed", again)
		}
		f.await(p)
		f.wantState(parent.ID, queue.StatePending)
	})
	t.Run("RetryReopensCancelled", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		parent := f.enqueue("a")
		p := f.claimOne()
		kids := f.spawn(p, "x")
		f.await(p)
		f.cancel(&driver.JobCancelParams{ID: parent.ID})
		f.wantState(kids[0].Job.ID, queue.StateCancelled)
		f.retry(&driver.JobRetryParams{ID: parent.ID})
		f.wantState(parent.ID, queue.StateWaiting)
		f.complete(f.claimID(kids[0].Job.ID))
		f.claimID(parent.ID)
	})
	t.Run("WaitingListedAndCounted", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		parent := f.enqueue("a")
		p := f.claimOne()
		f.spawn(p, "x")
		f.await(p)
		got := f.list(&queue.JobListParams{States: []queue.State{queue.StateWaiting}})
		if len(got) != 1 || got[0].ID != parent.ID {
			t.Fatalf("listed waiting jobs %v, want [%d]", ids(got), parent.ID)
		}
		stats, err := f.x.QueueStats(f.ctx, testQueue)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Counts[queue.StateWaiting] != 1 || stats.Counts[queue.StatePending] != 1 || stats.Counts[queue.StateRunning] != 0 {
			t.Fatalf("QueueStats counts %v, want 1 waiting, 1 pending", stats.Counts)
		}
		if _, err := f.x.JobPosition(f.ctx, parent.ID); err == nil {
			t.Fatal("JobPosition of a waiting job: no error")
		}
	})
}

// spawnOne spawns one step of the running parent, failing on timeout when
// failOnTimeout, with one attempt.
func (f *fixture) spawnOne(parent *queue.Job, name string, failOnTimeout bool) *queue.Job {
	f.t.Helper()
	p := spawnParams(parent, name)
	p.Children[0].FailOnTimeout, p.Children[0].MaxAttempts = failOnTimeout, 1
	res, err := f.x.JobSpawn(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobSpawn: %v", err)
	}
	return res[0].Job
}
