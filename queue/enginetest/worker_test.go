package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

func noop(l *ledger) queue.HandlerConfig {
	return queue.HandlerConfig{Handler: queue.HandlerFunc(func(_ context.Context, t *queue.Task) error {
		l.record(t)
		return nil
	})}
}

// TestWorker_TransactionalEnqueue: rolled-back enqueues never run; committed ones all do.
func TestWorker_TransactionalEnqueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		l := newLedger()
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"noop": noop(l)}, 4))
		const n = 300
		committed := make(map[int64]bool)
		for i := range 2 * n {
			tx, commit, rollback, err := s.begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.EnqueueTx(ctx, tx, &queue.EnqueueParams{Kind: "noop", TenantID: fmt.Sprintf("t%d", i%7)})
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if err := rollback(); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			committed[res.Job.ID] = true
		}
		waitFor(t, 30*time.Second, "committed jobs to run", func() bool {
			jobs, _ := l.total()
			return jobs >= n
		})
		l.mu.Lock()
		defer l.mu.Unlock()
		for id, runs := range l.runs {
			if !committed[id] {
				t.Errorf("job %d ran but its enqueue was rolled back", id)
			}
			if len(runs) != 1 {
				t.Errorf("job %d ran %d times", id, len(runs))
			}
		}
	})
}

// TestWorker_ExclusiveClaims: many claimers in two workers run every job exactly once.
func TestWorker_ExclusiveClaims(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		if err := c.SetQueueDefaultLimit(ctx, queue.DefaultQueue, 100); err != nil {
			t.Fatal(err)
		}
		const n = 3000
		params := make([]*queue.EnqueueParams, n)
		for i := range params {
			params[i] = &queue.EnqueueParams{Kind: "noop", TenantID: fmt.Sprintf("t%d", i%10)}
		}
		if _, err := c.EnqueueMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		l := newLedger()
		h := map[string]queue.HandlerConfig{"noop": noop(l)}
		startWorker(t, c, fastConfig(h, 8))
		startWorker(t, c, fastConfig(h, 8))
		// 26 s on SQLite under -race on a quiet 2-vCPU machine, 76 s in a
		// loaded CI run: the bound is a hang check.
		waitFor(t, 180*time.Second, "all jobs to run", func() bool {
			jobs, _ := l.total()
			return jobs == n
		})
		waitFor(t, 10*time.Second, "all jobs completed", func() bool {
			st, err := c.Stats(ctx, queue.DefaultQueue)
			return err == nil && st.Counts[queue.StateCompleted] == n
		})
		if jobs, runs := l.total(); runs != jobs {
			t.Fatalf("%d executions for %d jobs: duplicates without a failure", runs, jobs)
		}
	})
}

// TestWorker_RetryBackoff: failed attempts retry with backoff, then fail for good.
func TestWorker_RetryBackoff(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var mu sync.Mutex
		starts := map[int64][]time.Time{}
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			mu.Lock()
			starts[task.Job.ID] = append(starts[task.Job.ID], time.Now())
			mu.Unlock()
			if task.Job.Attempt <= 3 {
				return fmt.Errorf("boom %d", task.Job.Attempt)
			}
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"flaky": {Handler: h}}, 2)
		cfg.Backoff = func(int) time.Duration { return 100 * time.Millisecond }
		startWorker(t, c, cfg)
		ok := enqueue(t, c, &queue.EnqueueParams{Kind: "flaky", TenantID: "a", MaxAttempts: 5})
		bad := enqueue(t, c, &queue.EnqueueParams{Kind: "flaky", TenantID: "b", MaxAttempts: 3})

		done := waitState(t, c, ok.ID, queue.StateCompleted, 20*time.Second)
		if done.Attempt != 4 {
			t.Errorf("attempts = %d, want 4", done.Attempt)
		}
		attempts, err := c.Attempts(ctx, ok.ID)
		if err != nil {
			t.Fatal(err)
		}
		var retries int
		for _, a := range attempts {
			if a.Outcome == queue.OutcomeRetry {
				retries++
				if !strings.HasPrefix(a.Error, "boom") {
					t.Errorf("attempt %d error = %q", a.Attempt, a.Error)
				}
			}
		}
		if retries != 3 {
			t.Errorf("%d retry records, want 3: %+v", retries, attempts)
		}
		mu.Lock()
		for i := 1; i < len(starts[ok.ID]); i++ {
			if gap := starts[ok.ID][i].Sub(starts[ok.ID][i-1]); gap < 90*time.Millisecond {
				t.Errorf("retry %d started %s after the previous attempt, before the 100ms backoff", i, gap)
			}
		}
		mu.Unlock()

		failed := waitState(t, c, bad.ID, queue.StateFailed, 20*time.Second)
		if failed.Attempt != 3 || failed.ErrorMessage != "boom 3" {
			t.Errorf("failed job: attempt %d, error %q; want 3, boom 3", failed.Attempt, failed.ErrorMessage)
		}
		list, err := c.List(ctx, &queue.JobListParams{States: []queue.State{queue.StateFailed}})
		if err != nil || len(list) != 1 || list[0].ID != bad.ID {
			t.Errorf("failed list = %v, %v; want the failed job", list, err)
		}
	})
}

// TestWorker_PanicIsolation: a panic fails only its job; the others complete.
func TestWorker_PanicIsolation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		if err := c.SetQueueDefaultLimit(ctx, queue.DefaultQueue, 50); err != nil {
			t.Fatal(err)
		}
		l := newLedger()
		handlers := map[string]queue.HandlerConfig{
			"noop":  noop(l),
			"panic": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { panic("kaboom") })},
		}
		startWorker(t, c, fastConfig(handlers, 8))
		params := []*queue.EnqueueParams{{Kind: "panic", TenantID: "p", MaxAttempts: 2}}
		for i := range 500 {
			params = append(params, &queue.EnqueueParams{Kind: "noop", TenantID: fmt.Sprintf("t%d", i%5)})
		}
		res, err := c.EnqueueMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		job := waitState(t, c, res[0].Job.ID, queue.StateFailed, 20*time.Second)
		if job.Attempt != 2 || !strings.Contains(job.ErrorMessage, "kaboom") || !strings.Contains(job.ErrorMessage, "goroutine") {
			t.Errorf("panicked job: attempt %d, error %q; want 2 attempts and the stack", job.Attempt, job.ErrorMessage)
		}
		waitFor(t, 30*time.Second, "the other jobs", func() bool {
			jobs, _ := l.total()
			return jobs == 500
		})
	})
}

// TestWorker_Timeout: a cooperative handler past its timeout is cancelled,
// recorded as a timeout and retried.
func TestWorker_Timeout(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var cancelledAfter atomic.Int64
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			start := time.Now()
			if task.Job.Attempt > 1 {
				return nil
			}
			<-ctx.Done()
			cancelledAfter.Store(int64(time.Since(start)))
			return ctx.Err()
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"slow": {Handler: h, Timeout: 200 * time.Millisecond}}, 1)
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "slow", TenantID: "a"})
		waitState(t, c, job.ID, queue.StateCompleted, 20*time.Second)
		if d := time.Duration(cancelledAfter.Load()); d < 150*time.Millisecond || d > 400*time.Millisecond {
			t.Errorf("cancelled after %s, want about 200ms", d)
		}
		attempts, err := c.Attempts(ctx, job.ID)
		if err != nil || len(attempts) < 1 || !strings.Contains(attempts[0].Error, "timed out") {
			for _, a := range attempts {
				t.Logf("attempt %+v", *a)
			}
			t.Fatalf("attempts: %v; want a timeout record first", err)
		}
	})
}

// TestWorker_HungHandler: a handler that ignores cancellation loses its lease; a
// second worker completes the job; the hung attempt's result is fenced.
func TestWorker_HungHandler(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		release := make(chan struct{})
		var lost, hung atomic.Int32 // hung: the attempt whose handler hangs
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			// The first attempt that runs hangs. Under load it need not be
			// attempt 1: a claim whose answer came too late (its statement
			// committed, the worker had given up on it) leaves an attempt
			// that never ran, whose lease expires and is rescued.
			if hung.CompareAndSwap(0, int32(task.Job.Attempt)) {
				<-release // ignores ctx
			}
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"hang": {Handler: h, Timeout: 100 * time.Millisecond}}, 2)
		cfg.LeaseDuration, cfg.HeartbeatInterval, cfg.StuckThreshold = 400*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
		cfg.Hooks.Finished = func(_ *queue.Job, _ queue.Outcome, err error) {
			if errors.Is(err, queue.ErrLeaseLost) {
				lost.Add(1)
			}
		}
		// The hung attempt keeps heartbeating: only its timeout and the
		// lease expiry after it stop it. A worker that cannot stop a
		// handler stops renewing its lease once the timeout passes.
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "hang", TenantID: "a"})
		done := waitState(t, c, job.ID, queue.StateCompleted, 20*time.Second)
		if h := int(hung.Load()); h == 0 || done.Attempt <= h {
			t.Errorf("completed by attempt %d, want one after the hung attempt %d", done.Attempt, h)
		}
		close(release)
		// A hang check: the fenced finish goes through the completer, which
		// a loaded run can hold up for seconds.
		waitFor(t, 30*time.Second, "the hung attempt to be fenced", func() bool { return lost.Load() >= 1 })
		if n := lost.Load(); n != 1 {
			t.Errorf("the hung attempt's lease loss reported %d times, want once", n)
		}
	})
}
