package queue_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
)

// tickJob is a periodic job every second whose jobs name their tick and
// wait in a queue no worker serves, so the test can read them all.
func tickJob() queue.PeriodicJob {
	return queue.PeriodicJob{Name: "tick", Schedule: "* * * * * *", Params: func(tick time.Time) *queue.EnqueueParams {
		return &queue.EnqueueParams{Queue: "ticks", Kind: "tick", TenantID: "cron", Args: map[string]time.Time{"tick": tick}}
	}}
}

// tickJobs returns the ticks of the jobs tickJob enqueued, oldest first.
func tickJobs(t *testing.T, s *store) []time.Time {
	t.Helper()
	jobs, err := s.driver.Executor().JobList(context.Background(), &queue.JobListParams{Queue: "ticks", Limit: 1000})
	if err != nil {
		t.Fatalf("JobList: %v", err)
	}
	ticks := make([]time.Time, 0, len(jobs))
	for _, j := range jobs {
		var a struct{ Tick time.Time }
		if err := json.Unmarshal(j.Args, &a); err != nil {
			t.Fatalf("job %d args %s: %v", j.ID, j.Args, err)
		}
		ticks = append(ticks, a.Tick)
	}
	slices.SortFunc(ticks, func(a, b time.Time) int { return a.Compare(b) })
	return ticks
}

// Two workers with the same periodic job on one store: each tick is
// enqueued once, and when the leader stops the other goes on from the next
// tick, none skipped.
func TestWorker_PeriodicOncePerTick(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var swept [2]atomic.Int64 // per worker: sweeps run, so the leader is known
		stops := make([]func(), 2)
		for i := range stops {
			cfg := fastConfig(nil, 1)
			cfg.Periodic = []queue.PeriodicJob{tickJob()}
			cfg.Hooks.Maintained = func(string, int) { swept[i].Add(1) }
			_, stops[i] = startWorker(t, c, cfg)
		}
		waitFor(t, 20*time.Second, "2 ticks", func() bool { return len(tickJobs(t, s)) >= 2 })
		leader := 0
		if swept[1].Load() > swept[0].Load() {
			leader = 1
		}
		stops[leader]() // resigns: the other leads next
		before, sweptBefore := len(tickJobs(t, s)), swept[1-leader].Load()
		waitFor(t, 20*time.Second, "2 more ticks", func() bool { return len(tickJobs(t, s)) >= before+2 })
		stops[1-leader]()
		if swept[1-leader].Load() == sweptBefore {
			t.Fatal("the second worker never led after the first stopped")
		}

		ticks := tickJobs(t, s)
		for i := 1; i < len(ticks); i++ {
			if d := ticks[i].Sub(ticks[i-1]); d != time.Second {
				t.Fatalf("ticks %v: %s between #%d and #%d, want each second once", ticks, d, i-1, i)
			}
		}
		recs, err := s.driver.Executor().PeriodicList(context.Background())
		if err != nil {
			t.Fatalf("PeriodicList: %v", err)
		}
		names := map[string]*queue.PeriodicRecord{}
		for _, r := range recs {
			names[r.Name] = r
		}
		r := names["tick"]
		if r == nil || r.Runs != int64(len(ticks)) || !r.LastTick.Equal(ticks[len(ticks)-1]) || r.Schedule != "* * * * * *" {
			t.Fatalf("record %+v: want %d runs, last tick %s", r, len(ticks), ticks[len(ticks)-1])
		}
		for _, name := range []string{"docket.rescue", "docket.schedule", "docket.clean"} {
			if names[name] == nil {
				t.Fatalf("no record of the sweep %s: %v", name, recs)
			}
		}
		if r := names["docket.schedule"]; r.Schedule != "@every 20ms" || r.Runs == 0 {
			t.Fatalf("schedule sweep's record %+v: want @every 20ms, run", r)
		}
	})
}

func TestNewWorker_PeriodicInvalid(t *testing.T) {
	t.Parallel()
	s := backends[len(backends)-1].open(t) // sqlite
	c := queue.NewClient(s.driver, queue.ClientConfig{})
	bad := tickJob()
	bad.Schedule = "*/5 * *"
	cfg := fastConfig(nil, 1)
	cfg.Periodic = []queue.PeriodicJob{tickJob(), bad}
	if _, err := queue.NewWorker(c, cfg); !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("NewWorker with a bad spec: %v, want ErrInvalid", err)
	}
	cfg.Periodic = []queue.PeriodicJob{tickJob()}
	cfg.Maintenance.Disabled = true
	if _, err := queue.NewWorker(c, cfg); !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("NewWorker with periodic jobs and no maintenance: %v, want ErrInvalid", err)
	}
}

// The sweeps go on when the store's periodic records cannot be written
// (here the table is gone): a scheduled job still becomes pending and
// runs, on the leader's own schedule.
func TestWorker_SweepsWithoutPeriodicRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		tx, commit, rollback, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const drop = `DROP TABLE docket_periodic`
		switch tx := tx.(type) {
		case pgx.Tx:
			_, err = tx.Exec(ctx, drop)
		case *sql.Tx:
			_, err = tx.ExecContext(ctx, drop)
		default:
			t.Fatalf("native transaction %T", tx)
		}
		if err != nil {
			_ = rollback()
			t.Fatal(err)
		}
		if err := commit(); err != nil {
			t.Fatal(err)
		}
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var ran atomic.Int32
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error { ran.Add(1); return nil })
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"later": {Handler: h}}, 1))
		res, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "later", TenantID: "a", RunAt: time.Now().Add(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Job.State != queue.StateScheduled {
			t.Fatalf("job %s, want scheduled", res.Job.State)
		}
		waitFor(t, 20*time.Second, "the scheduled job to run", func() bool { return ran.Load() == 1 })
	})
}
