package queue_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// Two workers whose hosts' clocks are 10 minutes ahead of the store's and
// 10 minutes behind it: periodic
// ticks fall due by the store's clock whichever leads. Each tick's job is
// created at its tick by the store's clock, and when the leader stops the
// other goes on from the next tick. By the hosts' clocks the first leader
// would run ticks 10 minutes early (labelled 10 minutes ahead of their
// creation) or, behind, wait 20 minutes for the tick its predecessor
// stored.
func TestWorker_PeriodicByStoreClock(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var swept [2]atomic.Int64 // per worker: sweeps run, so the leader is known
		stops := make([]func(), 2)
		for i, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
			cfg := fastConfig(nil, 1)
			cfg.Periodic = []queue.PeriodicJob{tickJob()}
			cfg.Hooks.Maintained = func(string, int) { swept[i].Add(1) }
			cfg.Maintenance.HostClock = func() time.Time { return time.Now().Add(skew) }
			_, stops[i] = startWorker(t, c, cfg)
		}
		waitFor(t, 20*time.Second, "2 ticks", func() bool { return len(tickCreations(t, s)) >= 2 })
		leader := 0
		if swept[1].Load() > swept[0].Load() {
			leader = 1
		}
		stops[leader]() // resigns: the other, its clock 20 minutes off the first's, leads next
		before, sweptBefore := len(tickCreations(t, s)), swept[1-leader].Load()
		waitFor(t, 20*time.Second, "2 more ticks under the other leader", func() bool { return len(tickCreations(t, s)) >= before+2 })
		stops[1-leader]()
		if swept[1-leader].Load() == sweptBefore {
			t.Fatal("the second worker never led after the first stopped")
		}
		ticks := tickCreations(t, s)
		for i, tc := range ticks {
			if i > 0 && tc.tick.Sub(ticks[i-1].tick) != time.Second {
				t.Errorf("ticks %s and %s: want each second once", ticks[i-1].tick.Format("15:04:05.000"), tc.tick.Format("15:04:05.000"))
			}
			if lag := tc.created.Sub(tc.tick); lag < -100*time.Millisecond || lag > 1500*time.Millisecond {
				t.Errorf("tick %s created at %s by the store's clock (%s after it), want within -100 ms..1.5 s",
					tc.tick.Format("15:04:05.000"), tc.created.Format("15:04:05.000"), lag)
			}
		}
	})
}

type tickCreation struct{ tick, created time.Time }

// tickCreations returns the ticks of the jobs tickJob enqueued, with the
// jobs' creation by the store's clock, oldest first.
func tickCreations(t *testing.T, s *store) []tickCreation {
	t.Helper()
	jobs, err := s.driver.Executor().JobList(context.Background(), &queue.JobListParams{Queue: "ticks", Limit: 1000})
	if err != nil {
		t.Fatalf("JobList: %v", err)
	}
	out := make([]tickCreation, 0, len(jobs))
	for _, j := range jobs {
		var a struct{ Tick time.Time }
		if err := json.Unmarshal(j.Args, &a); err != nil {
			t.Fatalf("job %d args %s: %v", j.ID, j.Args, err)
		}
		out = append(out, tickCreation{a.Tick, j.CreatedAt})
	}
	slices.SortFunc(out, func(a, b tickCreation) int { return a.tick.Compare(b.tick) })
	return out
}
