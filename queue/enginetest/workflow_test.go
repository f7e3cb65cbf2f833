package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// sumWorkflow is a workflow parent's handler: it spawns one "square" step
// per number (idempotent: a later run gets the same children back), waits
// while any is unfinished, fails if one failed, and otherwise sums their
// results.
func sumWorkflow(runs *atomic.Int32, numbers ...int) queue.HandlerConfig {
	return queue.HandlerConfig{Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		runs.Add(1)
		steps := make([]*queue.Step, len(numbers))
		for i, n := range numbers {
			steps[i] = &queue.Step{Name: fmt.Sprint("square-", n),
				EnqueueParams: queue.EnqueueParams{Kind: "square", Args: map[string]int{"n": n}}}
		}
		res, err := t.Spawn(ctx, steps...)
		if err != nil {
			return err
		}
		sum := 0
		for _, r := range res {
			switch r.Job.State {
			case queue.StateCompleted:
				var out struct{ Square int }
				if err := json.Unmarshal(r.Job.Result, &out); err != nil {
					return err
				}
				sum += out.Square
			case queue.StateFailed, queue.StateCancelled:
				return queue.Permanent(fmt.Errorf("step %s: %s", r.Job.StepName(), r.Job.ErrorMessage))
			default:
				return queue.AwaitChildren()
			}
		}
		t.SetResult(json.RawMessage(fmt.Sprintf(`{"sum":%d}`, sum)))
		return nil
	})}
}

// squareStep is the steps' handler; before, when set, runs first and may
// end the attempt with an error.
func squareStep(l *ledger, before func(ctx context.Context, t *queue.Task) error) queue.HandlerConfig {
	return queue.HandlerConfig{Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		l.record(t)
		if before != nil {
			if err := before(ctx, t); err != nil {
				return err
			}
		}
		var in struct{ N int }
		if err := json.Unmarshal(t.Job.Args, &in); err != nil {
			return queue.Permanent(err)
		}
		t.SetResult(json.RawMessage(fmt.Sprintf(`{"square":%d}`, in.N*in.N)))
		return nil
	})}
}

// stepRuns returns the runs of each step of parent, by step name.
func stepRuns(t *testing.T, c *queue.Client, l *ledger, parent int64) map[string]int {
	t.Helper()
	kids, err := c.Children(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int)
	for _, k := range kids {
		out[k.StepName()] = l.count(k.ID)
	}
	return out
}

// TestWorkflow_FanOutFanIn: a parent fans out three steps and sums their
// results. The tenant's limit is 1: the steps can run only because the
// waiting parent holds no slot. The parent runs twice (once to spawn, once
// to sum), spending one attempt; each step runs once.
func TestWorkflow_FanOutFanIn(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var runs atomic.Int32
		l := newLedger()
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{
			"sum": sumWorkflow(&runs, 1, 2, 3), "square": squareStep(l, nil),
		}, 4))
		parent := enqueue(t, c, &queue.EnqueueParams{Kind: "sum", TenantID: "acme"})
		done := waitState(t, c, parent.ID, queue.StateCompleted, 30*time.Second)
		if string(done.Result) != `{"sum": 14}` && string(done.Result) != `{"sum":14}` {
			t.Fatalf("parent result %s, want sum 14", done.Result)
		}
		if n := runs.Load(); n != 2 || done.Attempt != 1 {
			t.Fatalf("parent ran %d times, attempt %d; want 2 runs, 1 attempt spent", n, done.Attempt)
		}
		as, err := c.Attempts(context.Background(), parent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 2 || as[0].Outcome != queue.OutcomeWaiting || as[1].Outcome != queue.OutcomeCompleted {
			t.Fatalf("parent attempts %+v, want waiting then completed", as)
		}
		for step, n := range stepRuns(t, c, l, parent.ID) {
			if n != 1 {
				t.Errorf("step %s ran %d times, want 1", step, n)
			}
		}
	})
}

// dropLease is an executor whose heartbeats report the lease of one job
// lost, once: the worker stops that handler, as when its worker dies or
// loses the store. That heartbeat renews the job's lease for a millisecond
// only, so the rescue can take the job at once, whatever the worker's
// lease (the other jobs keep long leases, which a loaded machine cannot
// let expire by mistake).
type dropLease struct {
	driver.Executor
	job     atomic.Int64
	dropped atomic.Bool
}

func (e *dropLease) JobHeartbeat(ctx context.Context, p *driver.JobHeartbeatParams) ([]queue.Lease, error) {
	id := e.job.Load()
	i := slices.IndexFunc(p.Leases, func(l queue.Lease) bool { return l.JobID == id })
	if id == 0 || i < 0 || !e.dropped.CompareAndSwap(false, true) {
		return e.Executor.JobHeartbeat(ctx, p)
	}
	if _, err := e.Executor.JobHeartbeat(ctx, &driver.JobHeartbeatParams{Leases: p.Leases[i : i+1], LeaseDuration: time.Millisecond}); err != nil {
		return nil, err
	}
	rest := slices.Delete(slices.Clone(p.Leases), i, i+1)
	return e.Executor.JobHeartbeat(ctx, &driver.JobHeartbeatParams{Leases: rest, LeaseDuration: p.LeaseDuration})
}

// TestWorkflow_StepLeaseLost: one step's attempt loses its lease midway
// (its handler is stopped; the rescue takes the job once the lease
// expires). Only that step runs again; the others and the parent's spawn
// are not repeated, and the parent sums once all are done.
func TestWorkflow_StepLeaseLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		exec := &dropLease{Executor: s.driver.Executor()}
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: exec}, queue.ClientConfig{})
		var runs atomic.Int32
		l := newLedger()
		var stopped atomic.Int32
		hang := func(ctx context.Context, t *queue.Task) error {
			if t.Job.StepName() != "square-2" || t.Job.Attempt > 1 {
				return nil
			}
			exec.job.Store(t.Job.ID)
			<-ctx.Done() // until the heartbeat says the lease is lost
			stopped.Add(1)
			return context.Cause(ctx)
		}
		cfg := fastConfig(map[string]queue.HandlerConfig{"sum": sumWorkflow(&runs, 1, 2, 3), "square": squareStep(l, hang)}, 4)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 20*time.Second, 100*time.Millisecond
		if err := c.SetQueueDefaultLimit(context.Background(), queue.DefaultQueue, 3); err != nil {
			t.Fatal(err)
		}
		startWorker(t, c, cfg)
		parent := enqueue(t, c, &queue.EnqueueParams{Kind: "sum", TenantID: "acme"})
		done := waitState(t, c, parent.ID, queue.StateCompleted, 30*time.Second)
		if string(done.Result) != `{"sum": 14}` && string(done.Result) != `{"sum":14}` {
			t.Fatalf("parent result %s, want sum 14", done.Result)
		}
		if stopped.Load() != 1 {
			t.Fatalf("the hung step was stopped %d times, want 1", stopped.Load())
		}
		want := map[string]int{"square-1": 1, "square-2": 2, "square-3": 1}
		if got := stepRuns(t, c, l, parent.ID); !mapsEqual(got, want) {
			t.Fatalf("step runs %v, want %v", got, want)
		}
		if n := runs.Load(); n != 2 {
			t.Fatalf("parent ran %d times, want 2", n)
		}
	})
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestWorkflow_RetryFailedStep: a step fails for good, and the parent
// with it. Client.Retry of the parent re-opens it: only the failed step
// runs again, and the parent then sums.
func TestWorkflow_RetryFailedStep(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var runs atomic.Int32
		l := newLedger()
		var broken atomic.Bool
		broken.Store(true)
		fail := func(_ context.Context, t *queue.Task) error {
			if t.Job.StepName() == "square-3" && broken.Load() {
				return queue.Permanent(errors.New("out of ink"))
			}
			return nil
		}
		cfg := fastConfig(map[string]queue.HandlerConfig{"sum": sumWorkflow(&runs, 1, 2, 3), "square": squareStep(l, fail)}, 4)
		cfg.LeaseDuration = 20 * time.Second // the parent's runs are counted: no lease may expire on a loaded machine
		startWorker(t, c, cfg)
		parent := enqueue(t, c, &queue.EnqueueParams{Kind: "sum", TenantID: "acme"})
		failed := waitState(t, c, parent.ID, queue.StateFailed, 30*time.Second)
		if failed.ErrorMessage != "step square-3: out of ink" {
			t.Fatalf("parent failed with %q", failed.ErrorMessage)
		}
		broken.Store(false)
		retried, err := c.Retry(context.Background(), parent.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if retried.ID != parent.ID {
			t.Fatalf("Retry returned job %d, want the parent %d re-opened", retried.ID, parent.ID)
		}
		done := waitState(t, c, parent.ID, queue.StateCompleted, 30*time.Second)
		if string(done.Result) != `{"sum": 14}` && string(done.Result) != `{"sum":14}` {
			t.Fatalf("parent result %s, want sum 14", done.Result)
		}
		want := map[string]int{"square-1": 1, "square-2": 1, "square-3": 2}
		if got := stepRuns(t, c, l, parent.ID); !mapsEqual(got, want) {
			t.Fatalf("step runs %v, want %v", got, want)
		}
		if n := runs.Load(); n != 3 {
			t.Fatalf("parent ran %d times, want 3 (spawn, see the failure, sum after the retry)", n)
		}
	})
}

// TestWorkflow_CancelCascades: cancelling a waiting parent cancels its
// steps, and stops the running one's handler.
func TestWorkflow_CancelCascades(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var runs atomic.Int32
		l := newLedger()
		var stoppedOnce sync.Once
		stopped := make(chan struct{})
		hang := func(ctx context.Context, t *queue.Task) error {
			<-ctx.Done()
			stoppedOnce.Do(func() { close(stopped) })
			return context.Cause(ctx)
		}
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{
			"sum": sumWorkflow(&runs, 1, 2), "square": squareStep(l, hang),
		}, 4))
		parent := enqueue(t, c, &queue.EnqueueParams{Kind: "sum", TenantID: "acme"})
		waitState(t, c, parent.ID, queue.StateWaiting, 30*time.Second)
		waitFor(t, 30*time.Second, "a step to start", func() bool { _, n := l.total(); return n > 0 })
		if _, err := c.Cancel(context.Background(), parent.ID, ""); err != nil {
			t.Fatal(err)
		}
		kids, err := c.Children(context.Background(), parent.ID)
		if err != nil || len(kids) != 2 {
			t.Fatalf("children %v, %v", kids, err)
		}
		for _, k := range kids {
			if k.State != queue.StateCancelled {
				t.Errorf("step %s is %s after its parent's cancel, want cancelled", k.StepName(), k.State)
			}
		}
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Fatal("the running step's handler was not stopped")
		}
		if _, n := l.total(); n != 1 {
			t.Fatalf("%d step runs, want 1 (the limit of 1; the other never started)", n)
		}
	})
}

// TestTask_SpawnChecksSteps: Spawn refuses steps it cannot keep apart or
// that would leave the parent's tenant, before writing anything; a step
// without a queue runs in its parent's; Child finds a step by name.
func TestTask_SpawnChecksSteps(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		step := func(name string) *queue.Step {
			return &queue.Step{Name: name, EnqueueParams: queue.EnqueueParams{Kind: "square"}}
		}
		keyed, foreign := step("k"), step("f")
		keyed.UniqueKey, foreign.TenantID = "mine", "globex"
		results := make(chan string, 1)
		parent := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			var out []string
			for _, steps := range [][]*queue.Step{{step("")}, {step("a"), step("a")}, {keyed}, {foreign}, {nil}} {
				if _, err := task.Spawn(ctx, steps...); !errors.Is(err, queue.ErrInvalid) {
					out = append(out, fmt.Sprintf("%v: %v", steps, err))
				}
			}
			if kids, err := task.Children(ctx); err != nil || len(kids) != 0 {
				out = append(out, fmt.Sprintf("refused spawns left children %v (%v)", kids, err))
			}
			if _, err := task.Spawn(ctx, step("one")); err != nil {
				out = append(out, err.Error())
			}
			one, err := task.Child(ctx, "one")
			switch {
			case err != nil:
				out = append(out, err.Error())
			case one.Queue != "wf" || one.TenantID != "acme" || one.ParentID != task.Job.ID:
				out = append(out, fmt.Sprintf("step %s, parent %d; want in queue wf, tenant acme", describeJob(one), one.ParentID))
			}
			if _, err := task.Child(ctx, "two"); !errors.Is(err, queue.ErrNotFound) {
				out = append(out, fmt.Sprintf("Child of a step never spawned: %v", err))
			}
			results <- fmt.Sprint(out)
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"parent": {Handler: parent}}, 1)
		cfg.Queues = map[string]queue.QueueConfig{"wf": {MaxWorkers: 1}}
		startWorker(t, c, cfg)
		enqueue(t, c, &queue.EnqueueParams{Queue: "wf", Kind: "parent", TenantID: "acme"})
		select {
		case got := <-results:
			if got != "[]" {
				t.Fatal(got)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the parent did not run")
		}
	})
}

func describeJob(j *queue.Job) string {
	return fmt.Sprintf("job %d (%s/%s %s)", j.ID, j.TenantID, j.Queue, j.State)
}

// TestWorkflow_CancelledStepWakesParent: cancelling a step (here one no
// worker serves) wakes its waiting parent at once, without a poll: the
// parent then sees the step cancelled and fails.
func TestWorkflow_CancelledStepWakesParent(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var runs atomic.Int32
		parent := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			runs.Add(1)
			res, err := task.Spawn(ctx, &queue.Step{Name: "x", EnqueueParams: queue.EnqueueParams{Kind: "x", Queue: "elsewhere"}})
			if err != nil {
				return err
			}
			if !res[0].Job.State.Finished() {
				return queue.AwaitChildren()
			}
			return queue.Permanent(fmt.Errorf("step x is %s", res[0].Job.State))
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"parent": {Handler: parent}}, 2)
		// No poll and no sweep wakes the claim loops before the deadline:
		// only the cancel's own wake-up (SQLite has no notifications).
		cfg.PollInterval = time.Minute
		cfg.Maintenance.ScheduleInterval, cfg.Maintenance.RescueInterval = time.Minute, time.Minute
		startWorker(t, c, cfg)
		p := enqueue(t, c, &queue.EnqueueParams{Kind: "parent", TenantID: "acme"})
		waitState(t, c, p.ID, queue.StateWaiting, 30*time.Second)
		kids, err := c.Children(context.Background(), p.ID)
		if err != nil || len(kids) != 1 {
			t.Fatalf("children %v, %v", kids, err)
		}
		if _, err := c.Cancel(context.Background(), kids[0].ID, ""); err != nil {
			t.Fatal(err)
		}
		failed := waitState(t, c, p.ID, queue.StateFailed, 10*time.Second)
		if failed.ErrorMessage != "step x is cancelled" || runs.Load() != 2 {
			t.Fatalf("parent failed with %q after %d runs, want the cancelled step seen on its second run", failed.ErrorMessage, runs.Load())
		}
	})
}
