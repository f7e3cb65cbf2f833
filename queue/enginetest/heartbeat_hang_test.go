package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// hangExecutor is an executor whose lease renewals hang, once hang is set,
// until their context ends: a network blackhole between the worker and the
// store. It records when the last renewal that got through was sent.
type hangExecutor struct {
	driver.Executor
	hang    atomic.Bool
	renewed atomic.Int64              // renewals that got through
	sent    atomic.Pointer[time.Time] // when the last of them was sent
	hung    chan struct{}             // closed when the first renewal hangs
	hangs   atomic.Int32              // renewals hung
}

func (e *hangExecutor) JobHeartbeat(ctx context.Context, p *driver.JobHeartbeatParams) ([]queue.Lease, error) {
	if e.hang.Load() {
		if e.hangs.Add(1) == 1 {
			close(e.hung)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	sent := time.Now()
	held, err := e.Executor.JobHeartbeat(ctx, p)
	if err == nil {
		e.sent.Store(&sent)
		e.renewed.Add(1)
	}
	return held, err
}

// A renewal that hangs does not keep a handler running past its lease.
// A job runs over leases of 1 s with heartbeats every 300 ms; after two
// renewals the store stops answering them: each renewal hangs until its
// timeout, which is at least one interval. The worker must cancel the
// handler when its lease, as last renewed (from when that renewal was
// sent), runs out, beside the renewal in flight, not when the renewal
// gives up: by then the store may have handed the job to another worker.
// Before the fix the handler was cancelled when the hung renewal timed
// out, 101-102 ms past the lease's end with these timings (2 of 2 runs;
// up to an interval in general); after it, 0-6 ms past.
func TestWorker_HeartbeatHangCancelsAtRunOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		if !s.driver.Capabilities().MultiProcess {
			t.Skip("a store of one process cancels nothing during an outage (TestWorker_HeartbeatOutageKeepsRenewing)")
		}
		const lease, interval = time.Second, 300 * time.Millisecond
		he := &hangExecutor{Executor: s.driver.Executor(), hung: make(chan struct{})}
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: he}, queue.ClientConfig{})
		started := make(chan struct{}, 2)
		type cancelled struct {
			at    time.Time
			cause error
		}
		var got atomic.Pointer[cancelled]
		hold := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started <- struct{}{}
			if task.Job.Attempt > 1 {
				return s.completeWithEffect(ctx, task)
			}
			<-ctx.Done()
			got.Store(&cancelled{at: time.Now(), cause: context.Cause(ctx)})
			return context.Cause(ctx)
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"hold": {Handler: hold}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = lease, interval
		cfg.StuckThreshold = time.Minute
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)

		job := enqueue(t, c, &queue.EnqueueParams{Kind: "hold", TenantID: "t"})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the job did not start within 10 s")
		}
		waitFor(t, 10*time.Second, "two renewals", func() bool { return he.renewed.Load() >= 2 })
		he.hang.Store(true)
		select {
		case <-he.hung:
		case <-time.After(10 * time.Second):
			t.Fatal("no renewal hung within 10 s")
		}
		waitFor(t, 10*time.Second, "the handler's cancellation", func() bool { return got.Load() != nil })

		c1 := got.Load()
		end := he.sent.Load().Add(lease)
		late := c1.at.Sub(end)
		t.Logf("renewals hang: handler cancelled %v after its lease's end as last renewed (sent + %v), %d renewal(s) hung",
			late.Round(time.Millisecond), lease, he.hangs.Load())
		if margin := 50 * time.Millisecond; late > margin || late < -margin {
			t.Errorf("handler cancelled %v after its lease's end; want within ±%v", late, margin)
		}
		if !errors.Is(c1.cause, queue.ErrLeaseLost) || !strings.Contains(c1.cause.Error(), "heartbeats failed") {
			t.Errorf("cancelled with %v; want the heartbeat deadline (lease lost)", c1.cause)
		}
		if n := log.losses(job.ID); n != 1 {
			t.Errorf("%d lease losses, want 1", n)
		}
		he.hang.Store(false)
		done := waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		if done.Attempt != 2 {
			t.Errorf("completed in attempt %d, want 2 (rescued after the lease ran out)", done.Attempt)
		}
	})
}
