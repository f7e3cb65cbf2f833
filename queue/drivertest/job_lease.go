package drivertest

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobHeartbeat(t *testing.T) {
	t.Run("ExtendsHeld", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		f.enqueue("b")
		done := f.enqueue("c")
		jobs := f.claim(testQueue, 3, 30*time.Second)
		if len(jobs) != 3 {
			t.Fatalf("claimed %d, want 3", len(jobs))
		}
		var held []queue.Lease
		for _, j := range jobs {
			if j.ID == done.ID {
				f.complete(j)
			} else {
				held = append(held, j.Lease())
			}
		}
		forged := held[0]
		forged.Token++
		sent := append(slices.Clone(held), forged, done.Lease(), queue.Lease{JobID: done.ID + 100, Attempt: 1, Token: 7})
		before := time.Now()
		got := f.heartbeat(time.Hour, sent...)
		wantLeases(t, got, held)
		for _, l := range held {
			near(t, "LeaseExpiresAt after heartbeat", f.get(l.JobID).LeaseExpiresAt, before.Add(time.Hour))
		}
		if got := f.heartbeat(time.Hour); len(got) != 0 {
			t.Fatalf("heartbeat of no leases returned %v", got)
		}
	})
	t.Run("NoDuration", func(t *testing.T) {
		// SQLite took a heartbeat of no duration and set the leases to
		// expire at once: the next rescue took jobs of a live worker.
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		jobs := f.claim(testQueue, 1, 30*time.Second)
		for _, d := range []time.Duration{0, -time.Second} {
			_, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{jobs[0].Lease()}, LeaseDuration: d})
			if !errors.Is(err, driver.ErrInvalid) {
				t.Errorf("heartbeat with LeaseDuration %s: %v, want ErrInvalid", d, err)
			}
		}
		near(t, "LeaseExpiresAt after refused heartbeats", f.get(jobs[0].ID).LeaseExpiresAt, jobs[0].LeaseExpiresAt)
	})
	t.Run("InTxStatementTime", func(t *testing.T) {
		t.Parallel()
		s.testHeartbeatInTx(t)
	})
	t.Run("AfterRescue", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		old := f.claim(testQueue, 1, shortLease)[0]
		f.rescueUntil(old.ID)
		if got := f.heartbeat(time.Hour, old.Lease()); len(got) != 0 {
			t.Fatalf("heartbeat of a rescued lease returned %v", got)
		}
		f.wantState(old.ID, queue.StatePending)
		cur := f.claimOne()
		wantLeases(t, f.heartbeat(time.Hour, old.Lease(), cur.Lease()), []queue.Lease{cur.Lease()})
	})
}

// testHeartbeatInTx: a lease renewed inside a
// transaction that began earlier runs from the statement's time, not the
// transaction's start.
func (s *suite) testHeartbeatInTx(t *testing.T) {
	f := s.setup(t)
	f.enqueue("a")
	j := f.claimOne()
	tx, err := f.x.Begin(f.ctx)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer func() { _ = tx.Rollback(f.ctx) }()
	if _, err := tx.JobGet(f.ctx, j.ID); err != nil { // the transaction has started
		t.Fatalf("JobGet: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // the transaction ages
	called := time.Now()
	held, err := tx.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{j.Lease()}, LeaseDuration: time.Minute})
	if err != nil || len(held) != 1 {
		t.Fatalf("JobHeartbeat in a transaction: %v, %d held", err, len(held))
	}
	if err := tx.Commit(f.ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if exp := f.get(j.ID).LeaseExpiresAt; exp.Before(called.Add(time.Minute - 10*time.Millisecond)) {
		t.Fatalf("lease renewed to %v, before the call time %v + 1m: it runs from the transaction's start",
			exp, called)
	}
}

func (s *suite) testJobProgress(t *testing.T) {
	t.Run("Stores", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		for _, p := range []struct {
			stage   string
			percent int
			msg     string
		}{{"downloading", 3, "fetching"}, {"parsing", 40, "page 4 of 10"}, {"parsing", 55, ""}} {
			f.progress(j.Lease(), p.stage, p.percent, p.msg)
			got := f.wantState(j.ID, queue.StateRunning)
			if got.Stage != p.stage || got.Progress != p.percent || got.ProgressMessage != p.msg {
				t.Fatalf("stored (%q, %d, %q), want (%q, %d, %q)",
					got.Stage, got.Progress, got.ProgressMessage, p.stage, p.percent, p.msg)
			}
		}
	})
	t.Run("LeaseLost", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		f.enqueue("b")
		j := f.claimOne()
		done := f.claimOne()
		f.complete(done)
		forged := j.Lease()
		forged.Token++
		before := f.get(j.ID)
		for _, c := range []struct {
			name  string
			lease queue.Lease
		}{
			{"WrongToken", forged},
			{"Finished", done.Lease()},
			{"Missing", queue.Lease{JobID: done.ID + 100, Attempt: 1, Token: 1}},
		} {
			err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: c.lease, Stage: "zombie", Percent: 99})
			if c.name == "Missing" && errors.Is(err, queue.ErrNotFound) {
				continue // a lease of a missing job is not held either way
			}
			wantErr(t, "JobProgress "+c.name, err, queue.ErrLeaseLost)
		}
		unchanged(t, before, f.get(j.ID))
		if d := f.get(done.ID); d.Stage == "zombie" || d.Progress != 100 {
			t.Fatalf("progress with a finished lease changed the job: %+v", d)
		}
	})
}

// heartbeat renews leases and returns the held ones.
func (f *fixture) heartbeat(d time.Duration, leases ...queue.Lease) []queue.Lease {
	f.t.Helper()
	got, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: leases, LeaseDuration: d})
	if err != nil {
		f.t.Fatalf("JobHeartbeat: %v", err)
	}
	return got
}

// progress reports progress with a lease that must be held.
func (f *fixture) progress(l queue.Lease, stage string, percent int, msg string) {
	f.t.Helper()
	err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: l, Stage: stage, Percent: percent, Message: msg})
	if err != nil {
		f.t.Fatalf("JobProgress(%+v): %v", l, err)
	}
}

// wantLeases fails t unless got and want hold the same leases.
func wantLeases(t *testing.T, got, want []queue.Lease) {
	t.Helper()
	key := func(a, b queue.Lease) int { return cmp.Compare(a.JobID, b.JobID) }
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, key)
	slices.SortFunc(want, key)
	if !slices.Equal(got, want) {
		t.Fatalf("held leases %+v, want %+v", got, want)
	}
}

// unchanged fails t if a write that should have changed nothing changed
// the job.
func unchanged(t *testing.T, before, after *queue.Job) {
	t.Helper()
	if before.State != after.State || before.Attempt != after.Attempt || before.LeaseToken != after.LeaseToken ||
		!before.LeaseExpiresAt.Equal(after.LeaseExpiresAt) || before.Stage != after.Stage ||
		before.Progress != after.Progress || before.ProgressMessage != after.ProgressMessage ||
		before.ErrorMessage != after.ErrorMessage || !before.RunAt.Equal(after.RunAt) ||
		!before.CompletedAt.Equal(after.CompletedAt) || !before.UpdatedAt.Equal(after.UpdatedAt) {
		t.Fatalf("a write with a lost lease changed the job:\nbefore %+v\nafter  %+v", before, after)
	}
}
