package drivertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// periodicTime is a tick on a whole second, as cron schedules give.
func periodicTime(offset time.Duration) time.Time {
	return time.Now().Truncate(time.Second).Add(offset).UTC()
}

func (f *fixture) register(ps ...*driver.PeriodicRegisterParams) []*queue.PeriodicRecord {
	f.t.Helper()
	recs, err := f.x.PeriodicRegister(f.ctx, ps)
	if err != nil {
		f.t.Fatalf("PeriodicRegister: %v", err)
	}
	if len(recs) != len(ps) {
		f.t.Fatalf("PeriodicRegister: %d records for %d params", len(recs), len(ps))
	}
	return recs
}

func (f *fixture) advance(p *driver.PeriodicAdvanceParams) bool {
	f.t.Helper()
	ok, err := f.x.PeriodicAdvance(f.ctx, p)
	if err != nil {
		f.t.Fatalf("PeriodicAdvance: %v", err)
	}
	return ok
}

func (f *fixture) periodicRecord(name string) *queue.PeriodicRecord {
	f.t.Helper()
	recs, err := f.x.PeriodicList(f.ctx)
	if err != nil {
		f.t.Fatalf("PeriodicList: %v", err)
	}
	for _, r := range recs {
		if r.Name == name {
			return r
		}
	}
	f.t.Fatalf("PeriodicList has no record %q", name)
	return nil
}

func (s *suite) testPeriodic(t *testing.T) {
	// Now is the clock leases run by: a lease taken just before reading it
	// expires LeaseDuration after it, give or take the round trips.
	t.Run("Now", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("acme")
		j := f.claimOne()
		now, err := f.x.Now(f.ctx)
		if err != nil {
			t.Fatalf("Now: %v", err)
		}
		if left := j.LeaseExpiresAt.Sub(now); left > longLease || left < longLease-10*time.Second {
			t.Fatalf("a %s lease taken just before Now expires %s after it: Now is not the leases' clock", longLease, left)
		}
	})
	t.Run("Register", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		t1, t2 := periodicTime(time.Minute), periodicTime(2*time.Minute)
		recs := f.register(&driver.PeriodicRegisterParams{Name: "b", Schedule: "@every 1m", NextRun: t1},
			&driver.PeriodicRegisterParams{Name: "a", Schedule: "0 * * * *", NextRun: t2})
		if recs[0].Name != "b" || recs[1].Name != "a" {
			t.Fatalf("records %q, %q: want b, a (params' order)", recs[0].Name, recs[1].Name)
		}
		if r := recs[0]; r.Schedule != "@every 1m" || !r.NextRun.Equal(t1) || !r.LastTick.IsZero() || !r.LastRunAt.IsZero() || r.Runs != 0 {
			t.Fatalf("new record %+v: want schedule @every 1m, next run %s, no run", r, t1)
		}
		// The same schedule again keeps the stored next run.
		if r := f.register(&driver.PeriodicRegisterParams{Name: "b", Schedule: "@every 1m", NextRun: t2})[0]; !r.NextRun.Equal(t1) {
			t.Fatalf("re-registered with the same schedule: next run %s, want %s kept", r.NextRun, t1)
		}
		if !f.advance(&driver.PeriodicAdvanceParams{Name: "b", Schedule: "@every 1m", Expect: t1, Tick: t1, NextRun: t2}) {
			t.Fatal("advance of a registered record: not done")
		}
		// A new schedule resets the next run and keeps the history.
		t3 := periodicTime(time.Hour)
		r := f.register(&driver.PeriodicRegisterParams{Name: "b", Schedule: "@every 1h", NextRun: t3})[0]
		if r.Schedule != "@every 1h" || !r.NextRun.Equal(t3) || !r.LastTick.Equal(t1) || r.Runs != 1 {
			t.Fatalf("re-registered with a new schedule: %+v, want @every 1h next %s, last tick %s, 1 run", r, t3, t1)
		}
		recs, err := f.x.PeriodicList(f.ctx)
		if err != nil {
			t.Fatalf("PeriodicList: %v", err)
		}
		if len(recs) != 2 || recs[0].Name != "a" || recs[1].Name != "b" {
			t.Fatalf("PeriodicList: %d records, want a and b by name", len(recs))
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, p := range []*driver.PeriodicRegisterParams{
			{Schedule: "@hourly", NextRun: periodicTime(0)},
			{Name: "x", NextRun: periodicTime(0)},
			{Name: "x", Schedule: "@hourly"},
		} {
			_, err := f.x.PeriodicRegister(f.ctx, []*driver.PeriodicRegisterParams{p})
			wantErr(t, fmt.Sprintf("PeriodicRegister(%+v)", p), err, queue.ErrInvalid)
		}
		_, err := f.x.PeriodicAdvance(f.ctx, &driver.PeriodicAdvanceParams{Name: "x", Schedule: "@hourly"})
		wantErr(t, "PeriodicAdvance with no tick", err, queue.ErrInvalid)
	})
	t.Run("AdvanceCompareAndSet", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		t0, t1, t2, t3 := periodicTime(0), periodicTime(time.Second), periodicTime(2*time.Second), periodicTime(3*time.Second)
		f.register(&driver.PeriodicRegisterParams{Name: "p", Schedule: "@every 1s", NextRun: t0})
		before := time.Now()
		steps := []struct {
			name string
			p    driver.PeriodicAdvanceParams
			want bool
		}{
			{"unknown name", driver.PeriodicAdvanceParams{Name: "nope", Schedule: "@every 1s", Expect: t0, Tick: t0, NextRun: t1}, false},
			{"other schedule", driver.PeriodicAdvanceParams{Name: "p", Schedule: "@every 2s", Expect: t0, Tick: t0, NextRun: t1}, false},
			{"stale expect", driver.PeriodicAdvanceParams{Name: "p", Schedule: "@every 1s", Expect: t1, Tick: t1, NextRun: t2}, false},
			{"due tick", driver.PeriodicAdvanceParams{Name: "p", Schedule: "@every 1s", Expect: t0, Tick: t0, NextRun: t1}, true},
			{"same tick again", driver.PeriodicAdvanceParams{Name: "p", Schedule: "@every 1s", Expect: t0, Tick: t0, NextRun: t1}, false},
			{"late, one missed", driver.PeriodicAdvanceParams{Name: "p", Schedule: "@every 1s", Expect: t1, Tick: t2, NextRun: t3, Missed: 1}, true},
		}
		for _, st := range steps {
			if got := f.advance(&st.p); got != st.want {
				t.Fatalf("%s: PeriodicAdvance = %v, want %v", st.name, got, st.want)
			}
		}
		r := f.periodicRecord("p")
		if !r.LastTick.Equal(t2) || !r.NextRun.Equal(t3) || r.Runs != 2 || r.Missed != 1 {
			t.Fatalf("record %+v: want last tick %s, next %s, 2 runs, 1 missed", r, t2, t3)
		}
		near(t, "LastRunAt", r.LastRunAt, before)
	})
	t.Run("AdvanceConcurrentTx", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		periodicRace(f)
	})
}

// periodicRace has several transactions advance the same tick and, when
// they win, insert a job in the same transaction: exactly one tick and one
// job must come out. A transaction that wins and rolls back leaves the
// tick to the others.
func periodicRace(f *fixture) {
	t := f.t
	t0, t1 := periodicTime(0), periodicTime(time.Second)
	f.register(&driver.PeriodicRegisterParams{Name: "race", Schedule: "@every 1s", NextRun: t0})
	const n = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		won      []int
		rollback = true // the first winner rolls back
		start    = make(chan struct{})
		errs     = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = func() error {
				tx, err := f.x.Begin(f.ctx)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback(f.ctx) }()
				ok, err := tx.PeriodicAdvance(f.ctx, &driver.PeriodicAdvanceParams{
					Name: "race", Schedule: "@every 1s", Expect: t0, Tick: t0, NextRun: t1})
				if err != nil || !ok {
					return err
				}
				p := params("periodic")
				p.Args = []byte(fmt.Sprintf(`{"n": %d}`, i))
				if _, err := tx.JobInsertMany(f.ctx, []*driver.JobInsertParams{p}); err != nil {
					return err
				}
				mu.Lock()
				undo := rollback
				rollback = false
				mu.Unlock()
				if undo {
					return tx.Rollback(f.ctx)
				}
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
				return tx.Commit(f.ctx)
			}()
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	jobs, err := f.x.JobList(f.ctx, &queue.JobListParams{TenantID: "periodic"})
	if err != nil {
		t.Fatalf("JobList: %v", err)
	}
	r := f.periodicRecord("race")
	if len(won) != 1 || len(jobs) != 1 || r.Runs != 1 || !r.NextRun.Equal(t1) {
		t.Fatalf("%d transactions won the tick, %d jobs, record %+v: want exactly one of each", len(won), len(jobs), r)
	}
}
