package queue_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// The worker's wall clock (HostClock) jumps 10 minutes ahead, then 20
// minutes back, while it leads: periodic ticks, and with them every
// maintenance sweep (the rescuer, the scheduler, the cleaner), still fall
// due each second by the store's clock. The store's clock is read once a
// minute; between readings the runner must measure the time since the last
// reading on the monotonic clock, not the host's wall clock, or a jump ahead
// records ticks 10 minutes early and the next falls due 10 minutes late, and
// a jump back stalls them until the host's clock catches up.
func TestWorker_PeriodicHostClockJumps(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var offset atomic.Int64
		cfg := fastConfig(nil, 1)
		cfg.Periodic = []queue.PeriodicJob{tickJob()}
		cfg.Maintenance.HostClock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		_, stop := startWorker(t, c, cfg)
		defer stop()
		for _, jump := range []time.Duration{0, 10 * time.Minute, -10 * time.Minute} {
			offset.Store(int64(jump))
			before := len(tickCreations(t, s))
			waitFor(t, 10*time.Second, "2 ticks with the host's clock "+jump.String()+" off", func() bool {
				return len(tickCreations(t, s)) >= before+2
			})
		}
		stop()
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
