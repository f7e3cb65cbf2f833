package queue_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

type slowProgressDriver struct {
	driver.Driver
	exec *slowProgressExec
}

func (d *slowProgressDriver) Executor() driver.Executor { return d.exec }

// slowProgressExec delays every progress write after the first by delay.
type slowProgressExec struct {
	driver.Executor
	calls atomic.Int32
	delay time.Duration
}

func (e *slowProgressExec) JobProgress(ctx context.Context, p *driver.JobProgressParams) error {
	if e.calls.Add(1) > 1 {
		time.Sleep(e.delay)
	}
	return e.Executor.JobProgress(ctx, p)
}

// At the end of the shutdown's grace, a handler that returned as it was
// cancelled hands its outcome to the completer before the completer stops,
// even while another handler ignores its cancellation (the shutdown then
// gives up on that one after a heartbeat interval). Its last progress
// write, slow here, comes first. The outcome was dropped ("finish after
// shutdown dropped") and the job left running until the rescuer took it.
func TestWorker_DrainWaitsForReturnedHandlers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		const heartbeat = 100 * time.Millisecond
		exec := &slowProgressExec{Executor: s.driver.Executor(), delay: 6 * heartbeat}
		c := queue.NewClient(&slowProgressDriver{Driver: s.driver, exec: exec}, queue.ClientConfig{})
		unblock := make(chan struct{})
		t.Cleanup(func() { close(unblock) })
		var started atomic.Int32
		stuck := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started.Add(1)
			<-unblock // ignores its cancellation
			return nil
		})
		cooperative := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := task.Progress(ctx, "reading", 10, "started"); err != nil {
				return err
			}
			if err := task.Progress(ctx, "reading", 60, "page 6 of 10"); err != nil { // coalesced
				return err
			}
			started.Add(1)
			<-ctx.Done()
			return ctx.Err()
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"stuck": {Handler: stuck}, "coop": {Handler: cooperative}}, 2)
		cfg.ShutdownGrace, cfg.HeartbeatInterval, cfg.StuckThreshold = 20*time.Millisecond, heartbeat, time.Minute
		_, stop := startWorker(t, c, cfg)
		stuckJob := enqueue(t, c, &queue.EnqueueParams{Kind: "stuck", TenantID: "a"})
		coopJob := enqueue(t, c, &queue.EnqueueParams{Kind: "coop", TenantID: "b"})
		waitFor(t, 10*time.Second, "both handlers running", func() bool { return started.Load() == 2 })
		stop()

		got, err := c.Get(context.Background(), coopJob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StatePending || got.Attempt != 0 {
			t.Errorf("cooperative job after the shutdown: %s, attempt %d; want pending (released), attempt 0", got.State, got.Attempt)
		}
		if got.Progress != 60 {
			t.Errorf("cooperative job shows %d%%, want its last report, 60%%", got.Progress)
		}
		got, err = c.Get(context.Background(), stuckJob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StatePending {
			t.Errorf("job of the handler that ignored its cancellation: %s, want pending (released)", got.State)
		}
	})
}
