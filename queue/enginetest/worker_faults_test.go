package queue_test

// Tests of the worker runtime under a store that refuses or delays
// finishes, heartbeats, progress writes and claims: each pins down a defect
// the runtime once had and failed before its fix.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// faultDriver wraps a driver so a test can make the store refuse finishes,
// heartbeats or progress writes.
type faultDriver struct {
	driver.Driver
	exec *faultExecutor
}

type faultExecutor struct {
	driver.Executor
	refuseFinish    atomic.Bool
	refuseHeartbeat atomic.Bool
	refuseProgress  atomic.Bool
}

var errRefused = errors.New("store refused (test)")

func newFaultDriver(d driver.Driver) *faultDriver {
	return &faultDriver{Driver: d, exec: &faultExecutor{Executor: d.Executor()}}
}

func (d *faultDriver) Executor() driver.Executor { return d.exec }

func (e *faultExecutor) JobFinish(ctx context.Context, ps []*driver.JobFinishParams) ([]error, error) {
	if e.refuseFinish.Load() {
		return nil, errRefused
	}
	return e.Executor.JobFinish(ctx, ps)
}

func (e *faultExecutor) JobProgress(ctx context.Context, p *driver.JobProgressParams) error {
	if e.refuseProgress.Load() {
		return errRefused
	}
	return e.Executor.JobProgress(ctx, p)
}

func (e *faultExecutor) JobHeartbeat(ctx context.Context, p *driver.JobHeartbeatParams) ([]queue.Lease, error) {
	if e.refuseHeartbeat.Load() {
		return nil, errRefused
	}
	return e.Executor.JobHeartbeat(ctx, p)
}

// hookLog counts the Finished and LeaseLost hook calls per job.
type hookLog struct {
	mu       sync.Mutex
	finished map[int64][]queue.Outcome // "" for a lost lease
	lost     map[int64]int
}

func newHookLog() *hookLog {
	return &hookLog{finished: make(map[int64][]queue.Outcome), lost: make(map[int64]int)}
}

func (h *hookLog) hooks() queue.Hooks {
	return queue.Hooks{
		Finished: func(job *queue.Job, o queue.Outcome, _ error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.finished[job.ID] = append(h.finished[job.ID], o)
		},
		LeaseLost: func(l queue.Lease) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.lost[l.JobID]++
		},
	}
}

func (h *hookLog) outcomes(id int64) []queue.Outcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]queue.Outcome(nil), h.finished[id]...)
}

func (h *hookLog) losses(id int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost[id]
}

// The last coalesced progress report is written when the attempt ends,
// also for a kind with a Timeout (whose context is cancelled by the time
// the attempt ends) and at shutdown.
func TestWorker_FinalProgressWritten(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		t.Run("Timeout", func(t *testing.T) {
			c := queue.NewClient(s.driver, queue.ClientConfig{})
			h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
				if err := task.Progress(ctx, "parsing", 10, "started"); err != nil {
					return err
				}
				// Within the coalescing interval: held back, written at the end.
				if err := task.Progress(ctx, "parsing", 60, "page 6 of 10"); err != nil {
					return err
				}
				return queue.Permanent(errors.New("bad input"))
			})
			startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"parse": {Handler: h, Timeout: time.Minute}}, 1))
			job := enqueue(t, c, &queue.EnqueueParams{Kind: "parse", TenantID: "t"})
			got := waitState(t, c, job.ID, queue.StateFailed, 10*time.Second)
			if got.Stage != "parsing" || got.Progress != 60 || got.ProgressMessage != "page 6 of 10" {
				t.Errorf("failed job shows %q %d%% %q, want the last report: parsing 60%% page 6 of 10",
					got.Stage, got.Progress, got.ProgressMessage)
			}
		})
		t.Run("Shutdown", func(t *testing.T) {
			c := queue.NewClient(s.driver, queue.ClientConfig{})
			started := make(chan struct{})
			h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
				if err := task.Progress(ctx, "embedding", 20, ""); err != nil {
					return err
				}
				if err := task.Progress(ctx, "embedding", 45, "chunk 9 of 20"); err != nil {
					return err
				}
				close(started)
				<-ctx.Done()
				return ctx.Err()
			})
			cfg := fastConfig(map[string]queue.HandlerConfig{"embed": {Handler: h}}, 1)
			cfg.ShutdownGrace = 50 * time.Millisecond
			_, stop := startWorker(t, c, cfg)
			job := enqueue(t, c, &queue.EnqueueParams{Kind: "embed", TenantID: "t"})
			<-started
			stop()
			got, err := c.Get(context.Background(), job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != queue.StatePending || got.Progress != 45 || got.ProgressMessage != "chunk 9 of 20" {
				t.Errorf("released job: %s %q %d%% %q, want pending with the last report (embedding 45%% chunk 9 of 20)",
					got.State, got.Stage, got.Progress, got.ProgressMessage)
			}
		})
	})
}

// Run returns at shutdown even when the store keeps refusing finishes: the
// outcome is left to the rescuer, as when a lease expires.
func TestWorker_ShutdownBoundedWhenFinishesRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		ran := make(chan struct{}, 1)
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error { ran <- struct{}{}; return nil })
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.Hooks = log.hooks()
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fd.exec.refuseFinish.Store(true)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		<-ran
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return while the store refused finishes")
		}
		if o := log.outcomes(job.ID); len(o) != 0 {
			t.Errorf("Finished hook fired with %v for an outcome never stored", o)
		}
		got, err := c.Get(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StateRunning {
			t.Errorf("job is %s, want still running (its lease left to expire)", got.State)
		}
	})
}

// A shutdown that releases the jobs of handlers ignoring cancellation
// leaves alone the attempts whose outcome is already with the completer:
// each attempt reports exactly one outcome, and a handler returning after
// its job was released reports nothing.
func TestWorker_ReleaseSkipsSettledAttempts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		gate := newFinishGate(s.driver)
		c := queue.NewClient(gate, queue.ClientConfig{})
		hold := make(chan struct{})
		defer close(hold)
		stubbornStarted := make(chan struct{})
		handlers := map[string]queue.HandlerConfig{
			"quick": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })},
			"stubborn": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error {
				close(stubbornStarted)
				<-hold // ignores its context
				return nil
			})},
		}
		log := newHookLog()
		var events sync.Map // job id → lease-lost events
		ch, unsubscribe := c.Bus().Subscribe(100, func(e queue.Event) bool { return e.Type == queue.EventLeaseLost })
		defer unsubscribe()
		go func() {
			for e := range ch {
				events.Store(e.Job.ID, true)
			}
		}()
		cfg := fastConfig(handlers, 2)
		cfg.ShutdownGrace = 50 * time.Millisecond
		cfg.HeartbeatInterval = 100 * time.Millisecond
		cfg.Hooks = log.hooks()
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		stubborn := enqueue(t, c, &queue.EnqueueParams{Kind: "stubborn", TenantID: "a"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		<-stubbornStarted
		quick := enqueue(t, c, &queue.EnqueueParams{Kind: "quick", TenantID: "b"})
		<-gate.exec.entered // quick's completion is in flight, held by the gate
		cancel()
		// Grace (50ms) and one heartbeat interval (100ms) later the shutdown
		// releases what is left; then let the first flush through.
		time.Sleep(600 * time.Millisecond)
		close(gate.exec.release)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if o := log.outcomes(quick.ID); len(o) != 1 || o[0] != queue.OutcomeCompleted {
			t.Errorf("quick job's Finished calls: %v, want one completed", o)
		}
		if o := log.outcomes(stubborn.ID); len(o) != 1 || o[0] != queue.OutcomeReleased {
			t.Errorf("stubborn job's Finished calls: %v, want one released", o)
		}
		if _, ok := events.Load(quick.ID); ok {
			t.Error("a lease-lost event was published for the completed job")
		}
		for id, want := range map[int64]queue.State{quick.ID: queue.StateCompleted, stubborn.ID: queue.StatePending} {
			if got := waitState(t, c, id, want, 5*time.Second); got.State != want {
				t.Errorf("job %d: %s, want %s", id, got.State, want)
			}
		}
	})
}

// A handler may read task.Job from any goroutine while it reports
// progress (the race detector failed this before Progress stopped writing
// to the job).
func TestTask_JobReadWhileProgress(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			var readers sync.WaitGroup
			stop := make(chan struct{})
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						_ = task.Job.Stage + task.Job.ProgressMessage
						_ = task.Job.Progress
					}
				}
			})
			defer readers.Wait()
			defer close(stop)
			for i := range 5 {
				if err := task.Progress(ctx, "step", i*20, "working"); err != nil {
					return err
				}
			}
			return nil
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
	})
}

// A Worker runs once; a second Run is refused instead of corrupting the
// state of the first.
func TestWorker_RunTwice(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })
		w, _ := startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second) // the first Run is running
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.Run(ctx); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("second Run: %v, want ErrInvalid", err)
		}
		if ctx.Err() != nil {
			t.Error("second Run ran until its context ended instead of refusing")
		}
	})
}

// Slots are counted per attempt: a worker that runs a job's next attempt
// while the handler of its previous attempt is still running keeps exact
// counts. The previous attempt loses its lease to failing heartbeats; with
// a short stuck threshold its slot is given back before the next attempt is
// claimed (MaxWorkers 1 must then never run two jobs), with a long one it
// holds its slot until it returns (no slot may be lost for good). On a
// store of one process failing heartbeats cancel nothing (see
// TestWorker_HeartbeatOutageKeepsRenewing), so the abandoned case runs
// only where several processes share the store.
func TestWorker_SlotsPerAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		maxWorkers int
		stuck      time.Duration
	}{
		{"AbandonedFirst", 1, 100 * time.Millisecond},
		{"BothHoldSlots", 4, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, s *store) {
				if tc.stuck < time.Second && !s.driver.Capabilities().MultiProcess {
					t.Skip("single-process store: failing heartbeats do not cancel the first attempt")
				}
				fd := newFaultDriver(s.driver)
				c := queue.NewClient(fd, queue.ClientConfig{})
				hold1, hold2 := make(chan struct{}), make(chan struct{})
				started := make(chan int, 4)
				var otherRan atomic.Bool
				handlers := map[string]queue.HandlerConfig{
					"hang": {Handler: queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
						started <- task.Job.Attempt
						if task.Job.Attempt == 1 {
							<-hold1 // ignores its context
							return nil
						}
						select {
						case <-hold2:
						case <-ctx.Done():
						}
						return nil
					})},
					"other": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error {
						otherRan.Store(true)
						return nil
					})},
				}
				cfg := fastConfig(handlers, tc.maxWorkers)
				cfg.LeaseDuration, cfg.HeartbeatInterval = time.Second, 100*time.Millisecond
				cfg.StuckThreshold = tc.stuck
				w, _ := startWorker(t, c, cfg)
				job := enqueue(t, c, &queue.EnqueueParams{Kind: "hang", TenantID: "a"})
				if a := <-started; a != 1 {
					t.Fatalf("first start is attempt %d", a)
				}
				fd.exec.refuseHeartbeat.Store(true) // the lease expires and is rescued
				select {
				case a := <-started:
					if a != 2 {
						t.Fatalf("second start is attempt %d", a)
					}
				case <-time.After(15 * time.Second):
					t.Fatal("the job's next attempt never started")
				}
				fd.exec.refuseHeartbeat.Store(false)
				close(hold1)
				// Once the first attempt's handler has returned and been
				// accounted for, one slot is held: the second attempt's (a
				// count kept per job would reach 0 or stay at 2).
				waitFor(t, 5*time.Second, "one handler holding a slot", func() bool { return w.Running(queue.DefaultQueue) == 1 })
				if tc.maxWorkers == 1 {
					enqueue(t, c, &queue.EnqueueParams{Kind: "other", TenantID: "b"})
					time.Sleep(300 * time.Millisecond)
					if otherRan.Load() {
						t.Error("MaxWorkers 1 ran a second job beside the running attempt")
					}
				}
				close(hold2)
				waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
				waitFor(t, 5*time.Second, "all slots free", func() bool { return w.Running(queue.DefaultQueue) == 0 })
				if tc.maxWorkers == 1 {
					waitFor(t, 5*time.Second, "the other job to run", otherRan.Load)
				}
			})
		})
	}
}

// Completing in the handler's transaction ends the lease: heartbeats that
// find it gone do not cancel the handler or report a lost lease. And a
// lease that is lost is reported once, not on every heartbeat.
func TestWorker_LeaseLossReportedOnce(t *testing.T) {
	t.Parallel()
	// work runs h for one job on a worker that beats every 50 ms and logs
	// its hooks.
	work := func(t *testing.T, c *queue.Client, h queue.HandlerFunc) (*hookLog, *queue.Job) {
		t.Helper()
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		return log, enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
	}
	forEachBackend(t, func(t *testing.T, s *store) {
		t.Run("AfterCompleteTx", func(t *testing.T) {
			c := queue.NewClient(s.driver, queue.ClientConfig{})
			var cancelled atomic.Bool
			h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
				if err := s.completeWithEffect(ctx, task); err != nil {
					return err
				}
				// Work after the commit (say, cleaning up) spans heartbeats.
				select {
				case <-ctx.Done():
					cancelled.Store(true)
				case <-time.After(500 * time.Millisecond):
				}
				return nil
			})
			log, job := work(t, c, h)
			waitFor(t, 10*time.Second, "the attempt's end", func() bool { return len(log.outcomes(job.ID)) > 0 })
			if cancelled.Load() {
				t.Error("the handler's context was cancelled after CompleteTx committed")
			}
			if n := log.losses(job.ID); n != 0 {
				t.Errorf("LeaseLost fired %d times for a job completed in its transaction", n)
			}
			if o := log.outcomes(job.ID); len(o) != 1 || o[0] != queue.OutcomeCompleted {
				t.Errorf("Finished calls %v, want one completed", o)
			}
		})
		// Cancelled by another process (seen by a heartbeat) or through the
		// worker's own client (seen at once, in process): one report each.
		for _, inProcess := range []bool{false, true} {
			t.Run(map[bool]string{false: "Once", true: "OnceInProcess"}[inProcess], func(t *testing.T) {
				c := queue.NewClient(s.driver, queue.ClientConfig{})
				canceller := queue.NewClient(s.driver, queue.ClientConfig{}) // cancels out of this process's sight
				if inProcess {
					canceller = c
				}
				started, hold := make(chan struct{}), make(chan struct{})
				h := queue.HandlerFunc(func(context.Context, *queue.Task) error {
					close(started)
					<-hold // ignores its context for several heartbeats
					return nil
				})
				log, job := work(t, c, h)
				<-started
				if _, err := canceller.Cancel(context.Background(), job.ID, "t"); err != nil {
					t.Fatal(err)
				}
				waitFor(t, 5*time.Second, "the lost lease", func() bool { return log.losses(job.ID) > 0 })
				time.Sleep(400 * time.Millisecond) // eight heartbeats
				close(hold)
				waitFor(t, 5*time.Second, "the attempt's end", func() bool { return len(log.outcomes(job.ID)) > 0 })
				if n := log.losses(job.ID); n != 1 {
					t.Errorf("LeaseLost fired %d times for one lost lease, want 1", n)
				}
			})
		}
	})
}

// CompleteTx that finds the lease lost rolls the handler's transaction
// back: a handler that commits anyway applies nothing.
func TestTask_CompleteTxLeaseLostRollsBack(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		other := queue.NewClient(s.driver, queue.ClientConfig{})
		started, lost := make(chan int64), make(chan struct{})
		result := make(chan [2]error, 1)
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			started <- task.Job.ID
			<-lost
			ctx = context.WithoutCancel(ctx)
			tx, commit, rollback, err := s.begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = rollback() }()
			if err := s.addEffect(ctx, tx, task.Job.ID); err != nil {
				return err
			}
			completeErr := task.CompleteTx(ctx, tx)
			commitErr := commit() // the mistake the API must make harmless
			result <- [2]error{completeErr, commitErr}
			return completeErr
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1))
		enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		id := <-started
		if _, err := other.Cancel(context.Background(), id, "t"); err != nil {
			t.Fatal(err)
		}
		close(lost)
		r := <-result
		if !errors.Is(r[0], queue.ErrLeaseLost) {
			t.Fatalf("CompleteTx after the job was cancelled: %v, want ErrLeaseLost", r[0])
		}
		if r[1] == nil {
			t.Error("Commit succeeded after CompleteTx reported the lease lost")
		}
		n, err := s.countEffects(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d effects committed by a handler whose lease was lost, want 0", n)
		}
	})
}

// Heartbeats that fail until the lease runs out cancel the handlers on a
// store several processes share (another may take the jobs over), but the
// leases stay renewed once heartbeats succeed again: a handler that
// completes in its transaction before the lease runs out is not wasted.
// On a store of one process the outage cancels nothing: on SQLite a
// handler's long transaction holds the only writer, which stalls
// heartbeats (TestServe_KillAndRestart caught this when failing heartbeats
// stopped the renewals), and the next renewal tells which leases are held.
func TestWorker_HeartbeatOutageKeepsRenewing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		started, proceed := make(chan struct{}), make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			close(started)
			<-proceed // ignores the cancellation
			ctx = context.WithoutCancel(ctx)
			return s.completeWithEffect(ctx, task)
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 3*time.Second, 100*time.Millisecond
		cfg.StuckThreshold = time.Minute
		cfg.Maintenance.Disabled = true // no rescuer: the expired lease stays this worker's
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		<-started
		fd.exec.refuseHeartbeat.Store(true)
		if s.driver.Capabilities().MultiProcess {
			waitFor(t, 10*time.Second, "the handler cancelled by the outage", func() bool { return log.losses(job.ID) > 0 })
		} else {
			time.Sleep(4 * time.Second) // past the lease as it stood when heartbeats stopped
			if n := log.losses(job.ID); n != 0 {
				t.Errorf("single-process store: %d lease losses reported during a heartbeat outage, want 0", n)
			}
		}
		fd.exec.refuseHeartbeat.Store(false)
		time.Sleep(500 * time.Millisecond) // heartbeats renew the lease again
		close(proceed)
		got := waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		if got.Attempt != 1 {
			t.Errorf("completed in attempt %d, want 1 (the lease renewed after the outage)", got.Attempt)
		}
	})
}

// Heartbeats that fail for less than the lease cancel nothing: the leases
// as last renewed still hold. Before, a heartbeat that failed (or timed
// out under load) more than half a lease after the last renewal cancelled
// every handler of the worker, with a third of the lease left.
func TestWorker_BriefHeartbeatOutageKeepsHandlers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		fd := newFaultDriver(s.driver)
		c := queue.NewClient(fd, queue.ClientConfig{})
		started, proceed := make(chan struct{}), make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			close(started)
			select {
			case <-proceed:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		log := newHookLog()
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 1)
		// A 6 s lease: the outage takes 2 s of it and leaves 4 s for the
		// next heartbeat on a loaded machine (with 3 s it was lost there).
		cfg.LeaseDuration, cfg.HeartbeatInterval = 6*time.Second, time.Second
		cfg.Hooks = log.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "t"})
		<-started
		fd.exec.refuseHeartbeat.Store(true)
		time.Sleep(2200 * time.Millisecond) // two heartbeats fail, 2 s of the 6 s lease
		fd.exec.refuseHeartbeat.Store(false)
		close(proceed)
		got := waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		if got.Attempt != 1 {
			t.Errorf("completed in attempt %d, want 1", got.Attempt)
		}
		if n := log.losses(job.ID); n != 0 {
			t.Errorf("%d lease losses reported for a 2 s outage of a 6 s lease, want 0", n)
		}
	})
}

// claimHeldExecutor holds the first claim until the test lets it go, then
// runs it on the server whatever its context, and answers as a database
// client does when its context ended during the call: with the context's
// error, though the claim committed.
type claimHeldExecutor struct {
	driver.Executor
	entered, release chan struct{}
	once             sync.Once
}

func (e *claimHeldExecutor) JobClaim(ctx context.Context, p *driver.JobClaimParams) ([]*queue.Job, bool, error) {
	first := false
	e.once.Do(func() { first = true })
	if !first {
		return e.Executor.JobClaim(ctx, p)
	}
	close(e.entered)
	<-e.release
	jobs, more, err := e.Executor.JobClaim(context.WithoutCancel(ctx), p)
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return jobs, more, err
}

// A claim in flight when the shutdown begins may commit on the server:
// the worker waits for its answer and hands the jobs back at once, no
// attempt spent. Before, the claim's context was the shutdown's, the
// answer was dropped, and the jobs stayed running with no handler until
// their leases expired and a rescue spent an attempt (found by the chaos
// graceful-shutdown scenario).
func TestWorker_ClaimInFlightAtShutdown(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		exec := &claimHeldExecutor{Executor: s.driver.Executor(), entered: make(chan struct{}), release: make(chan struct{})}
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: exec}, queue.ClientConfig{})
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "t"})
		ran := make(chan int64, 1)
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			ran <- task.Job.ID
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1)
		cfg.Maintenance.Disabled = true
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		<-exec.entered
		cancel() // the shutdown begins while the claim is in flight
		close(exec.release)
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		select {
		case id := <-ran:
			t.Errorf("job %d ran after the shutdown began", id)
		default:
		}
		got, err := c.Get(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != queue.StatePending || got.Attempt != 0 {
			t.Errorf("job after the shutdown: %s, attempt %d; want pending, attempt 0 (handed back, no attempt spent)", got.State, got.Attempt)
		}
	})
}
