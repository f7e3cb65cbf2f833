package queue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// clockDownExec fails reads of the store's clock while down is set, as a
// first statement on a pooled connection the database dropped does, and
// counts the reads that answered.
type clockDownExec struct {
	driver.Executor
	down atomic.Bool
	read atomic.Int64
}

func (e *clockDownExec) Now(ctx context.Context) (time.Time, error) {
	if e.down.Load() {
		return time.Time{}, errors.New("connection reset by peer")
	}
	e.read.Add(1)
	return e.Executor.Now(ctx)
}

// A leader whose first reading of the store's clock failed ran its
// periodic tasks by its host's clock when the store's records could be
// read right after (a connection the database dropped fails its first
// statement only), and recorded their ticks by it. With the host an hour
// ahead of the store: a periodic job's tick the store had due in 10
// minutes was enqueued at once; and the sweeps' next ticks were recorded
// an hour into the store's future, so once the clock was read, scheduling
// (and rescue, and retention) stopped for an hour: a job scheduled for
// now stayed scheduled. Ticks are the store's (docs/periodic.md): until
// its clock answers, the leader now runs the sweeps unrecorded, as when
// the records cannot be read, and the periodic jobs wait.
func TestWorker_PeriodicWaitsForStoreClock(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		exec := s.driver.Executor()
		storeNow, err := exec.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		due := storeNow.Add(10 * time.Minute).UTC().Truncate(time.Microsecond)
		job := tickJob()
		job.Schedule = "@every 1h"
		if _, err := exec.PeriodicRegister(ctx, []*driver.PeriodicRegisterParams{{Name: job.Name, Schedule: job.Schedule, NextRun: due}}); err != nil {
			t.Fatal(err)
		}

		wrapped := &clockDownExec{Executor: exec}
		wrapped.down.Store(true)
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: wrapped}, queue.ClientConfig{})
		cfg := fastConfig(nil, 1)
		cfg.Periodic = []queue.PeriodicJob{job}
		cfg.Maintenance.HostClock = func() time.Time { return time.Now().Add(time.Hour) }
		var swept atomic.Int64
		cfg.Hooks.Maintained = func(string, int) { swept.Add(1) }
		startWorker(t, c, cfg)
		waitFor(t, 20*time.Second, "the leader's sweeps", func() bool { return swept.Load() > 0 })
		time.Sleep(500 * time.Millisecond) // the runners' first runs, the store's clock unread
		wrapped.down.Store(false)

		later := enqueue(t, c, &queue.EnqueueParams{Queue: "later", Kind: "later", TenantID: "t", RunAt: time.Now().Add(300 * time.Millisecond)})
		deadline := time.Now().Add(10 * time.Second)
		for {
			j, err := c.Get(ctx, later.ID)
			if err != nil {
				t.Fatal(err)
			}
			if j.State == queue.StatePending {
				break
			}
			if time.Now().After(deadline) {
				recs, _ := c.Periodic(ctx)
				for _, r := range recs {
					if r.Name == "docket.schedule" {
						t.Fatalf("a job scheduled for now still %s after 10 s: the schedule sweep's next run is %s, %s after the store's now",
							j.State, r.NextRun.Format(time.RFC3339), r.NextRun.Sub(storeNow).Round(time.Minute))
					}
				}
				t.Fatalf("a job scheduled for now still %s after 10 s", j.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if ticks := tickJobs(t, s); len(ticks) > 0 {
			t.Fatalf("tick %s enqueued at %s by the store's clock, %s before the store had it due",
				ticks[0].Format(time.RFC3339), storeNow.Format(time.RFC3339), due.Sub(storeNow).Round(time.Minute))
		}
		recs, err := c.Periodic(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Name == job.Name && !r.NextRun.Equal(due) {
				t.Fatalf("next run %s, want %s as stored", r.NextRun, due)
			}
		}
	})
}
