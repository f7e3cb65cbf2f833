package queue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
)

// The worker's own heartbeat deadline under a skewed clock that jumps
// (the worker's side). The worker's wall clock, as the
// engine reads it (MaintenanceConfig.HostClock, the seam the chaos skew
// tests set), starts 10 minutes ahead of the database's and jumps between
// 10 minutes ahead and 10 minutes behind every 150 ms for the whole run,
// while a job runs over several leases of 1 s with heartbeats every 300 ms:
//
//   - while renewals get through, the lease never runs out, on the database
//     (lease_expires_at - clock_timestamp() stays within (0, lease]) or on
//     the worker (no LeaseLost): no lease is lost early;
//   - once renewals fail, the worker cancels the handler at its own
//     deadline, the last renewal that got through (when it was sent) plus
//     the lease, measured on the monotonic clock: before the database's
//     lease_expires_at (which the renewal's round trip puts a little
//     later), by no more than half a lease, and not after it by more than
//     the scheduling of a loaded box (50 ms). Before, the deadline was
//     checked at the next heartbeat only, up to an interval late: with 300
//     ms against a lease of 1 s, 200 ms past the database's expiry, when
//     another worker may already run the job.
//
// The heartbeat measures durations from time.Now, whose monotonic reading
// an operating system's clock step does not move; the engine's wall clock
// (HostClock) paces the periodic runner alone. A heartbeat that took its
// deadline from the host's wall clock would cancel at once after a jump
// ahead and 10 minutes late after one behind, and fail here.
func TestWorker_HeartbeatHostClockJumps(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		pg, ok := s.driver.(*postgres.Driver)
		if !ok {
			t.Skip("a store of one process cancels nothing during an outage (TestWorker_HeartbeatOutageKeepsRenewing); the lease's expiry is read from PostgreSQL")
		}
		const lease, interval = time.Second, 300 * time.Millisecond
		var offset atomic.Int64
		offset.Store(int64(10 * time.Minute))
		jumps := make(chan struct{})
		var jumping sync.WaitGroup
		jumping.Go(func() {
			tick := time.NewTicker(150 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-jumps:
					return
				case <-tick.C:
					offset.Store(-offset.Load())
				}
			}
		})
		defer func() { close(jumps); jumping.Wait() }()

		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		started := make(chan struct{}, 2)
		var cancelledAt atomic.Pointer[time.Time]
		hold := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started <- struct{}{}
			if task.Job.Attempt > 1 {
				return s.completeWithEffect(ctx, task)
			}
			<-ctx.Done()
			now := time.Now()
			cancelledAt.Store(&now)
			return context.Cause(ctx)
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"hold": {Handler: hold}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = lease, interval
		cfg.StuckThreshold = time.Minute
		cfg.Maintenance.HostClock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)

		job := enqueue(t, c, &queue.EnqueueParams{Kind: "hold", TenantID: "t"})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the job did not start within 10 s")
		}

		// Renewals get through for 2.5 leases: the lease as the database
		// sees it, sampled.
		var (
			least, most = time.Hour, time.Duration(0)
			expires     time.Time
			samples     int
		)
		sample := func() {
			var left float64
			var exp time.Time
			err := pg.Pool().QueryRow(context.Background(), `
SELECT extract(epoch FROM lease_expires_at - clock_timestamp()), lease_expires_at
FROM docket_jobs WHERE id = $1 AND state = 'running' AND attempt = 1`, job.ID).Scan(&left, &exp)
			if err != nil {
				return // rescued
			}
			d := time.Duration(left * float64(time.Second))
			least, most, expires = min(least, d), max(most, d), exp
			samples++
		}
		for end := time.Now().Add(5 * lease / 2); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			sample()
		}
		t.Logf("renewed: lease left on the database %v to %v in %d samples", least.Round(time.Millisecond), most.Round(time.Millisecond), samples)
		if least <= 0 || most > lease || samples < 50 {
			t.Errorf("lease left on the database while renewed: %v to %v in %d samples; want within (0, %v]", least, most, samples, lease)
		}
		if n := log.losses(job.ID); n != 0 {
			t.Fatalf("%d lease losses while renewals got through; want 0", n)
		}

		// Renewals fail: the handler is cancelled by the worker's deadline.
		fd.exec.refuseHeartbeat.Store(true)
		waitFor(t, 10*time.Second, "the handler's cancellation", func() bool {
			sample()
			return cancelledAt.Load() != nil
		})
		at := *cancelledAt.Load()
		early := expires.Sub(at)
		t.Logf("heartbeats refused: handler cancelled %v before the database's lease_expires_at (%s)",
			early.Round(time.Millisecond), expires.Format("15:04:05.000"))
		if late := 50 * time.Millisecond; early > lease/2 || early < -late {
			t.Errorf("handler cancelled %v before the lease ran out on the database; want within [-%v, %v]", early, late, lease/2)
		}
		if n := log.losses(job.ID); n != 1 {
			t.Errorf("%d lease losses, want 1", n)
		}
		fd.exec.refuseHeartbeat.Store(false)
		got := waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		if got.Attempt != 2 {
			t.Errorf("completed in attempt %d, want 2 (rescued after the lease ran out)", got.Attempt)
		}
	})
}
