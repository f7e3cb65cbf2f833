package queue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// finishGate wraps a driver so that its first JobFinish waits for the test:
// it signals entered, then blocks until release is closed or its context
// ends (which it reports on cancelled).
type finishGate struct {
	driver.Driver
	exec *gatedExecutor
}

type gatedExecutor struct {
	driver.Executor
	once      sync.Once
	entered   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
}

func newFinishGate(d driver.Driver) *finishGate {
	return &finishGate{Driver: d, exec: &gatedExecutor{
		Executor: d.Executor(), entered: make(chan struct{}),
		release: make(chan struct{}), cancelled: make(chan struct{}),
	}}
}

func (g *finishGate) Executor() driver.Executor { return g.exec }

func (e *gatedExecutor) JobFinish(ctx context.Context, params []*driver.JobFinishParams) ([]error, error) {
	first := false
	e.once.Do(func() { first = true; close(e.entered) })
	if first {
		select {
		case <-e.release:
		case <-ctx.Done():
			close(e.cancelled)
			return nil, ctx.Err()
		}
	}
	return e.Executor.JobFinish(ctx, params)
}

// Shutdown while the completer is storing outcomes: Run waits for the flush
// in flight and never cancels its context, so a job that ran is completed,
// not left running until its lease expires and run again.
func TestWorker_ShutdownWaitsForFlush(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		gate := newFinishGate(s.driver)
		c := queue.NewClient(gate, queue.ClientConfig{})
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		w, err := queue.NewWorker(c, fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		runDone := make(chan error, 1)
		go func() { runDone <- w.Run(ctx) }()
		select {
		case <-gate.exec.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("timed out waiting for the job's finish")
		}
		cancel()
		select {
		case err := <-runDone:
			t.Errorf("Run returned (%v) while a finish was in flight", err)
		case <-gate.exec.cancelled:
			t.Error("the context of the finish in flight was cancelled by the shutdown")
		case <-time.After(300 * time.Millisecond):
		}
		close(gate.exec.release)
		select {
		case err := <-runDone:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after the finish was released")
		}
		got, err := c.Get(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StateCompleted {
			t.Errorf("job is %s after shutdown, want completed", got.State)
		}
	})
}
