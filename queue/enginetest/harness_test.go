package queue_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// store is a fresh, migrated store of one driver plus what the tests need
// that the queue API does not offer: native transactions and an effects
// table written by handlers.
type store struct {
	driver driver.Driver
	// begin starts a native transaction (pgx.Tx, *sql.Tx).
	begin func(ctx context.Context) (tx any, commit, rollback func() error, err error)
	// addEffect records an effect of jobID inside tx (UNIQUE per job).
	addEffect func(ctx context.Context, tx any, jobID int64) error
	// countEffects counts the effects stored.
	countEffects func(ctx context.Context) (int, error)
}

// completeWithEffect records an effect of task's job and completes the job
// in one native transaction, as a handler using CompleteTx does.
func (s *store) completeWithEffect(ctx context.Context, task *queue.Task) error {
	return s.completeWithEffectThen(ctx, task, nil)
}

// completeWithEffectThen is completeWithEffect calling between, when not
// nil, after the effect and before CompleteTx.
func (s *store) completeWithEffectThen(ctx context.Context, task *queue.Task, between func()) error {
	tx, commit, rollback, err := s.begin(ctx)
	if err != nil {
		return err
	}
	if err := s.addEffect(ctx, tx, task.Job.ID); err != nil {
		_ = rollback()
		return err
	}
	if between != nil {
		between()
	}
	if err := task.CompleteTx(ctx, tx); err != nil {
		_ = rollback()
		return err
	}
	return commit()
}

// execDriver is a driver whose executor is exec, a test's wrapper of the
// driver's own.
type execDriver struct {
	driver.Driver
	exec driver.Executor
}

func (d *execDriver) Executor() driver.Executor { return d.exec }

// backends lists the drivers every engine test runs against.
var backends []struct {
	name string
	open func(t *testing.T) *store
}

// forEachBackend runs fn as a parallel subtest per driver.
func forEachBackend(t *testing.T, fn func(t *testing.T, s *store)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.open(t))
		})
	}
}

// ledger records executions by job id, the test's oracle.
type ledger struct {
	mu   sync.Mutex
	runs map[int64][]int // job id → attempts started
}

func newLedger() *ledger { return &ledger{runs: make(map[int64][]int)} }

func (l *ledger) record(t *queue.Task) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[t.Job.ID] = append(l.runs[t.Job.ID], t.Job.Attempt)
}

func (l *ledger) count(id int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs[id])
}

// attempts is the attempt numbers that started job id, in order.
func (l *ledger) attempts(id int64) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs[id])
}

func (l *ledger) total() (jobs, runs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.runs {
		jobs++
		runs += len(r)
	}
	return jobs, runs
}

// fastConfig is a worker configuration with compressed timings.
func fastConfig(handlers map[string]queue.HandlerConfig, workers int) queue.WorkerConfig {
	return queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{queue.DefaultQueue: {MaxWorkers: workers}},
		Handlers:      handlers,
		LeaseDuration: 2 * time.Second,
		PollInterval:  50 * time.Millisecond,
		ShutdownGrace: 5 * time.Second,
		Backoff:       queue.ExponentialBackoff(20*time.Millisecond, 200*time.Millisecond),
		Maintenance: queue.MaintenanceConfig{
			LeaderTTL: time.Second, ElectInterval: 100 * time.Millisecond,
			RescueInterval: 50 * time.Millisecond, ScheduleInterval: 20 * time.Millisecond,
		},
	}
}

// startWorker runs a worker until the test ends (or stop is called) and
// returns it with a stop function that waits for Run to return.
func startWorker(t *testing.T, c *queue.Client, cfg queue.WorkerConfig) (*queue.Worker, func()) {
	t.Helper()
	w, err := queue.NewWorker(c, cfg)
	if err != nil {
		t.Fatalf("NewWorker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState polls until the job reaches state.
func waitState(t *testing.T, c *queue.Client, id int64, state queue.State, timeout time.Duration) *queue.Job {
	t.Helper()
	var job *queue.Job
	waitFor(t, timeout, "job "+string(state), func() bool {
		j, err := c.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		job = j
		return j.State == state
	})
	return job
}

func enqueue(t *testing.T, c *queue.Client, p *queue.EnqueueParams) *queue.Job {
	t.Helper()
	res, err := c.Enqueue(context.Background(), p)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return res.Job
}
