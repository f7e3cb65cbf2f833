package queue_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// claimWatch counts the claims that went through it and the jobs they
// returned.
type claimWatch struct {
	driver.Executor
	mu      sync.Mutex
	claims  int
	claimed []int64
}

func (e *claimWatch) JobClaim(ctx context.Context, p *driver.JobClaimParams) ([]*queue.Job, bool, error) {
	jobs, more, err := e.Executor.JobClaim(ctx, p)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.claims++
	for _, j := range jobs {
		e.claimed = append(e.claimed, j.ID)
	}
	return jobs, more, err
}

func (e *claimWatch) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.claims
}

func (e *claimWatch) got(id int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.claimed, id)
}

// A cancelled job's handler keeps its tenant's slot until it returns. The
// tenant may run one job at a time; its job A's handler ignores its
// cancellation until the test lets it go. Cancelling A must cancel the
// handler's context at once, and the tenant's next job B must not start
// while A's handler runs, though the worker has free slots and claims
// again; once A's handler returns, B starts well before A's lease (a
// minute) could have run out: the worker freed the slot.
func TestWorker_CancelledHandlerHoldsTenantSlot(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		cw := &claimWatch{Executor: s.driver.Executor()}
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: cw}, queue.ClientConfig{})
		started, cancelled, release := make(chan int64, 4), make(chan struct{}), make(chan struct{})
		var aReturned, overlap atomic.Bool
		deaf := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started <- task.Job.ID
			<-ctx.Done()
			close(cancelled)
			<-release // goes on working, deaf to the cancellation
			aReturned.Store(true)
			return ctx.Err()
		})
		quick := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			if !aReturned.Load() {
				overlap.Store(true)
			}
			started <- task.Job.ID
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"deaf": {Handler: deaf}, "quick": {Handler: quick}}, 4)
		cfg.LeaseDuration, cfg.StuckThreshold = time.Minute, time.Minute
		startWorker(t, c, cfg)
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the worker's stop, on a failure
		ctx := context.Background()

		a := enqueue(t, c, &queue.EnqueueParams{Kind: "deaf", TenantID: "t"})
		waitStarted(t, started, a.ID)
		if _, err := c.Cancel(ctx, a.ID, "t"); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("the cancelled job's handler context was not cancelled within 10 s")
		}
		b := enqueue(t, c, &queue.EnqueueParams{Kind: "quick", TenantID: "t"})
		n := cw.count()
		waitFor(t, 10*time.Second, "two claims after B was enqueued", func() bool { return cw.count() >= n+2 || cw.got(b.ID) })
		if cw.got(b.ID) || overlap.Load() {
			t.Fatal("job B was claimed while the cancelled job A's handler was still running: the tenant ran 2 jobs with a limit of 1")
		}
		once.Do(func() { close(release) })
		waitStarted(t, started, b.ID)
		if overlap.Load() {
			t.Fatal("job B started before A's handler returned")
		}
		waitState(t, c, b.ID, queue.StateCompleted, 10*time.Second)
	})
}

func waitStarted(t *testing.T, started <-chan int64, id int64) {
	t.Helper()
	select {
	case got := <-started:
		if got != id {
			t.Fatalf("job %d started, want %d", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("job %d did not start within 10 s", id)
	}
}
