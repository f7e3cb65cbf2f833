package queue_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A PeriodicJob's Params is the application's code, run by the leader. A
// panic in it was not recovered: it ended the leader's process, and then
// each worker's in turn as it took over the lead. Now the tick fails as a
// tick whose job is invalid does (logged, not recorded, tried again), and
// the ticks after it run once Params works.
func TestWorker_PeriodicParamsPanicRecovered(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var calls atomic.Int64
		job := tickJob()
		params := job.Params
		job.Params = func(tick time.Time) *queue.EnqueueParams {
			if calls.Add(1) <= 2 {
				panic("the application's bug")
			}
			return params(tick)
		}
		cfg := fastConfig(nil, 1)
		cfg.Periodic = []queue.PeriodicJob{job}
		startWorker(t, c, cfg)
		waitFor(t, 20*time.Second, "a tick enqueued after Params panicked twice", func() bool {
			return calls.Load() > 2 && len(tickJobs(t, s)) > 0
		})
	})
}
