package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// WorkerConfig configures a Worker. Zero fields take the defaults named.
type WorkerConfig struct {
	// ID names this worker in leases and attempt records. Default:
	// hostname-pid-random.
	ID string
	// Queues to work, each with its number of concurrent jobs in this
	// process. Default: {"default": {MaxWorkers: 10}}.
	Queues map[string]QueueConfig
	// Handlers by job kind. A claimed job of an unknown kind fails
	// permanently.
	Handlers map[string]HandlerConfig

	// LeaseDuration is how long a claim holds without a heartbeat.
	// Default 30s.
	LeaseDuration time.Duration
	// HeartbeatInterval is how often leases are renewed. Default
	// LeaseDuration/3.
	HeartbeatInterval time.Duration
	// PollInterval is how often an idle queue is polled; notifications
	// usually wake it sooner. Default 1s.
	PollInterval time.Duration
	// FetchCooldown is the least time between two claims of a queue.
	// Default 2ms.
	FetchCooldown time.Duration
	// ShutdownGrace is how long running jobs may finish after Run's
	// context ends before they are cancelled and returned to pending.
	// Default 30s.
	ShutdownGrace time.Duration
	// StuckThreshold is how long a handler may take to return after its
	// context is cancelled (timeout, lost lease, shutdown). Past it the
	// handler is counted stuck, its local slot is given to another job and
	// its lease is no longer renewed, so another worker can take the job
	// over once the lease expires. Default 5s.
	StuckThreshold time.Duration
	// Backoff is the retry delay policy. Default ExponentialBackoff(2s, 1h).
	Backoff Backoff
	// Completers is how many batches of outcomes may be stored at once,
	// each on its own connection. More than one lets a busy worker use
	// several database cores and overlap commits; a second batch starts
	// only while enough outcomes wait, so batches stay large. Default: a
	// quarter of GOMAXPROCS, from 1 to 4 (1 on a machine of up to 7 cores).
	Completers int

	// Maintenance configures the leader-elected sweeps. Disabled when
	// Maintenance.Disabled is set.
	Maintenance MaintenanceConfig
	// Periodic jobs, enqueued once per tick of their schedule across
	// every worker of the store by the maintenance leader (periodic.go).
	// Define the same ones in every worker. Needs maintenance enabled.
	Periodic []PeriodicJob

	// Logger receives the worker's logs. Default: the client's logger.
	Logger *slog.Logger
	// Hooks observe the runtime, for tests and metrics. Optional.
	Hooks Hooks
}

// QueueConfig configures one queue of a worker.
type QueueConfig struct {
	// MaxWorkers is how many jobs of the queue this process runs at once.
	MaxWorkers int
	// Claimers is how many claims of the queue may be in flight at once,
	// each on its own connection and asking for at most its share of
	// MaxWorkers. More than one lets a busy worker use several database
	// cores; the store's rules (tenant limits, FIFO, round-robin) hold
	// across claimers as they do across processes, and a second claim
	// starts only while claims come back full. Default: a quarter of
	// GOMAXPROCS, from 1 to 4, at most MaxWorkers.
	Claimers int
}

// Hooks are called by the worker runtime. Each may be nil. They run on the
// worker's goroutines and must not block.
type Hooks struct {
	Claimed  func(jobs []*Job)
	Finished func(job *Job, outcome Outcome, err error)
	// LeaseLost reports an attempt's handler cancelled because its lease
	// is lost, once per attempt. When heartbeats failed until the lease ran
	// out the store may still hold it: a handler that returns anyway has
	// its outcome written, and Finished then reports that outcome.
	LeaseLost  func(lease Lease)
	Heartbeat  func(held int)
	Stuck      func(job *Job)
	Maintained func(task string, n int)
}

// Worker claims and runs jobs. Build it with NewWorker and call Run.
type Worker struct {
	client *Client
	exec   driver.Executor
	cfg    WorkerConfig
	id     string
	logger *slog.Logger

	active    *activeSet
	wake      map[string][]chan struct{} // per queue, per claim loop; buffered 1
	completer *completer
	periodic  []*periodicTask // Periodic's tasks
	jobs      sync.WaitGroup
	inHandler atomic.Int64 // handlers not returned yet, abandoned ones included (jobs also counts their ends)
	ran       atomic.Bool

	// Set by Run before anything starts.
	storeCtx   context.Context // for the worker's own writes; ends after the shutdown
	workCtx    context.Context // cancelled when running jobs must stop
	cancelWork context.CancelCauseFunc
}

// NewWorker validates cfg and returns a worker that shares client's driver
// and event bus.
func NewWorker(client *Client, cfg WorkerConfig) (*Worker, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = client.logger
	}
	w := &Worker{
		client: client, exec: client.exec, cfg: cfg, id: cfg.ID,
		logger: logger.With("worker_id", cfg.ID),
		active: newActiveSet(), wake: make(map[string][]chan struct{}),
	}
	for name, q := range cfg.Queues {
		for range q.Claimers {
			w.wake[name] = append(w.wake[name], make(chan struct{}, 1))
		}
	}
	w.active.stuckAfter, w.active.onStuck = cfg.StuckThreshold, w.checkStuck
	w.completer = newCompleter(w)
	var err error
	if w.periodic, err = w.periodicTasks(); err != nil {
		return nil, err
	}
	return w, nil
}

// defaultConcurrency is the default of QueueConfig.Claimers and
// WorkerConfig.Completers: a quarter of the cores, 1 to 4. On 2 cores a
// second claim loop and flusher cost a third of the throughput (the
// process's own CPU is the limit); on 16 cores 4 of each drained 8
// processes at 2.2x the jobs/s of 1 (docs/benchmarks.md).
func defaultConcurrency() int {
	return min(max(runtime.GOMAXPROCS(0)/4, 1), 4)
}

func (c *WorkerConfig) setDefaults() error {
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.Uint32N(1<<16))
	}
	if len(c.Queues) == 0 {
		c.Queues = map[string]QueueConfig{DefaultQueue: {MaxWorkers: 10}}
	}
	c.Queues = maps.Clone(c.Queues) // defaults are filled in below
	for name, q := range c.Queues {
		if err := ValidateQueueName(name); err != nil {
			return err
		}
		if q.MaxWorkers < 1 || q.MaxWorkers > 10000 {
			return fmt.Errorf("%w: queue %s: max workers %d outside 1..10000", ErrInvalid, name, q.MaxWorkers)
		}
		switch {
		case q.Claimers == 0:
			q.Claimers = min(defaultConcurrency(), q.MaxWorkers)
		case q.Claimers < 0 || q.Claimers > min(q.MaxWorkers, 64):
			return fmt.Errorf("%w: queue %s: claimers %d outside 1..min(max workers, 64)", ErrInvalid, name, q.Claimers)
		}
		c.Queues[name] = q
	}
	switch {
	case c.Completers == 0:
		c.Completers = defaultConcurrency()
	case c.Completers < 0 || c.Completers > 64:
		return fmt.Errorf("%w: completers %d outside 1..64", ErrInvalid, c.Completers)
	}
	for kind, h := range c.Handlers {
		if h.Handler == nil {
			return fmt.Errorf("%w: kind %q has no handler", ErrInvalid, kind)
		}
	}
	setDuration(&c.LeaseDuration, 30*time.Second)
	setDuration(&c.HeartbeatInterval, c.LeaseDuration/3)
	setDuration(&c.PollInterval, time.Second)
	setDuration(&c.FetchCooldown, 2*time.Millisecond)
	setDuration(&c.ShutdownGrace, 30*time.Second)
	setDuration(&c.StuckThreshold, 5*time.Second)
	if c.HeartbeatInterval >= c.LeaseDuration {
		return fmt.Errorf("%w: heartbeat interval %s must be shorter than the lease %s", ErrInvalid, c.HeartbeatInterval, c.LeaseDuration)
	}
	if c.Backoff == nil {
		c.Backoff = ExponentialBackoff(2*time.Second, time.Hour)
	}
	c.Maintenance.setDefaults(c.LeaseDuration)
	if m := c.Maintenance; !m.Disabled && m.ElectInterval >= m.LeaderTTL/2 {
		// A term's services run for LeaderTTL less the interval (leaderHold),
		// at most half the TTL: renewed less often, the maintenance ran
		// only part of the time.
		return fmt.Errorf("%w: maintenance elect interval %s must be shorter than half the leader TTL %s",
			ErrInvalid, m.ElectInterval, m.LeaderTTL)
	}
	return nil
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.id }

// Running returns how many of queue's slots (QueueConfig.MaxWorkers) are
// busy: handlers running, not counting those given up on as stuck.
func (w *Worker) Running(queue string) int { return w.active.running(queue) }

// Run claims and runs jobs until ctx ends, then shuts down gracefully: it
// stops claiming, lets running jobs finish within ShutdownGrace, cancels the
// rest and returns them to pending without spending an attempt. It returns
// nil after a clean shutdown. A Worker runs once: a second call returns an
// error wrapping ErrInvalid.
func (w *Worker) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: worker %s: Run called twice; build a new Worker", ErrInvalid, w.id)
	}
	// Stores outlive ctx so the shutdown can still write.
	storeCtx, stopStore := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStore()
	w.storeCtx = storeCtx
	w.workCtx, w.cancelWork = context.WithCancelCause(storeCtx)

	var bg sync.WaitGroup
	w.completer.start(storeCtx, &bg)
	bg.Go(func() { w.heartbeat(storeCtx) })
	unsubscribe := w.listenInProcess()
	fetchCtx, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	var producers sync.WaitGroup
	w.listenNotifier(fetchCtx, &producers)
	if !w.cfg.Maintenance.Disabled {
		producers.Go(func() { w.maintain(fetchCtx) })
	}
	for q, wake := range w.wake {
		gate := new(claimGate)
		for _, ch := range wake {
			producers.Go(func() { w.produce(fetchCtx, q, ch, gate) })
		}
	}
	w.logger.Info("worker started", "queues", len(w.cfg.Queues))

	<-ctx.Done()
	stopFetch()
	producers.Wait()
	unsubscribe()
	w.drain()
	w.completer.stop()
	stopStore()
	bg.Wait()
	w.logger.Info("worker stopped")
	return nil
}

// drain waits for running jobs for the grace period, then cancels them. A
// cancelled job's handler returns and the job is released.
func (w *Worker) drain() {
	done := make(chan struct{})
	go func() { w.jobs.Wait(); close(done) }()
	n := w.active.len()
	if n > 0 {
		w.logger.Info("waiting for running jobs", "running", n, "grace", w.cfg.ShutdownGrace)
	}
	select {
	case <-done:
		return
	case <-time.After(w.cfg.ShutdownGrace):
	}
	w.logger.Warn("grace period over; cancelling running jobs", "running", w.active.len())
	w.active.cancelAll(w.cancelWork, errShutdown)
	select {
	case <-done:
	case <-time.After(w.cfg.HeartbeatInterval):
		// Handlers that ignore their context: release their jobs anyway;
		// their late writes will be fenced.
		w.releaseAbandoned()
		w.awaitHandOffs()
	}
}

// awaitHandOffs waits until the handlers that have returned have handed
// their outcomes to the completer: one that returned as it was cancelled
// may still be writing its last progress, and an outcome handed on after
// the completer stopped is dropped (the job would wait for the rescuer
// although its handler ended). At most handOffTimeout.
func (w *Worker) awaitHandOffs() {
	select {
	case <-w.active.allHandedOn():
	case <-time.After(handOffTimeout):
	}
}

// handOffTimeout bounds the wait for a returned handler to hand its
// outcome on: the end of an attempt waits for a progress write in flight
// and then writes the last progress, each bounded by finalWriteTimeout.
const handOffTimeout = 2 * finalWriteTimeout

// releaseAbandoned returns to pending the jobs whose handlers still run
// after the cancellation. Attempts whose outcome is already with the
// completer are left to it.
func (w *Worker) releaseAbandoned() {
	for _, t := range w.active.settleRest() {
		w.logger.Warn("handler ignored cancellation; releasing its job", "job_id", t.lease.JobID)
		w.completer.submitItem(finishItem{
			task: t, params: &driver.JobFinishParams{Lease: t.lease, Outcome: OutcomeReleased, WorkerID: w.id}, running: true,
		})
	}
}

func (w *Worker) publish(t EventType, job *Job) {
	w.client.bus.Publish(Event{Type: t, Job: job})
}

// publishTask publishes an event with a snapshot of t's job, taken only
// when someone is subscribed to its type: a worker would otherwise copy
// every job it starts, and every progress write, for nobody (the worker's
// own subscription, listenInProcess, takes neither).
func (w *Worker) publishTask(e EventType, t *Task) {
	if w.client.bus.ListeningTo(e) {
		w.publish(e, t.snapshot())
	}
}

func isLeaseLost(err error) bool { return errors.Is(err, ErrLeaseLost) }
