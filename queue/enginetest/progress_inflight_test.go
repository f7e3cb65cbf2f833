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

type progressGateDriver struct {
	driver.Driver
	exec *progressGateExec
}

func (d *progressGateDriver) Executor() driver.Executor { return d.exec }

// progressGateExec holds the second progress write (the coalesced flush)
// until release is closed.
type progressGateExec struct {
	driver.Executor
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (e *progressGateExec) JobProgress(ctx context.Context, p *driver.JobProgressParams) error {
	if e.calls.Add(1) == 2 {
		close(e.entered)
		<-e.release
	}
	return e.Executor.JobProgress(ctx, p)
}

// A coalesced progress write in flight when the handler returns must not
// be overtaken by the attempt's finish: the failed job shows the last
// progress reported.
func TestTask_InFlightProgressFlushNotLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		g := &progressGateExec{Executor: s.driver.Executor(), entered: make(chan struct{}), release: make(chan struct{})}
		c := queue.NewClient(&progressGateDriver{Driver: s.driver, exec: g}, queue.ClientConfig{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := task.Progress(ctx, "parsing", 10, "started"); err != nil {
				return err
			}
			if err := task.Progress(ctx, "parsing", 60, "page 6 of 10"); err != nil { // coalesced
				return err
			}
			<-g.entered // its flush is on its way to the store
			return queue.Permanent(errors.New("bad input"))
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"parse": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "parse", TenantID: "t"})
		waitFor(t, 10*time.Second, "the flush in flight", func() bool {
			select {
			case <-g.entered:
				return true
			default:
				return false
			}
		})
		time.Sleep(300 * time.Millisecond) // the finish is stored meanwhile (or waits for the flush)
		close(g.release)
		waitState(t, c, job.ID, queue.StateFailed, 10*time.Second)
		time.Sleep(100 * time.Millisecond)
		got, err := c.Get(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Progress != 60 || got.ProgressMessage != "page 6 of 10" {
			t.Errorf("failed job shows %d%% %q, want the last report: 60%% page 6 of 10", got.Progress, got.ProgressMessage)
		}
	})
}
