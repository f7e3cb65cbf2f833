package queue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// TestTask_CompleteTx: completing in the handler's own transaction gives exactly
// one effect per completed job, even when commits fail.
func TestTask_CompleteTx(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		if err := c.SetQueueDefaultLimit(ctx, queue.DefaultQueue, 10); err != nil {
			t.Fatal(err)
		}
		var injected atomic.Int32
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			tx, commit, rollback, err := s.begin(ctx)
			if err != nil {
				return err
			}
			if err := s.addEffect(ctx, tx, task.Job.ID); err != nil {
				_ = rollback()
				return err
			}
			if err := task.CompleteTx(ctx, tx); err != nil {
				_ = rollback()
				return err
			}
			if rand.IntN(10) == 0 { // a failure right before commit
				injected.Add(1)
				_ = rollback()
				return errors.New("injected failure before commit")
			}
			return commit()
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"effect": {Handler: h}}, 4)
		cfg.Backoff = func(int) time.Duration { return 0 }
		startWorker(t, c, cfg)
		const n = 200
		params := make([]*queue.EnqueueParams, n)
		for i := range params {
			params[i] = &queue.EnqueueParams{Kind: "effect", TenantID: fmt.Sprintf("t%d", i%4), MaxAttempts: 20}
		}
		if _, err := c.EnqueueMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "all jobs completed", func() bool {
			st, err := c.Stats(ctx, queue.DefaultQueue)
			return err == nil && st.Counts[queue.StateCompleted] == n
		})
		effects, err := s.countEffects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if effects != n {
			t.Fatalf("%d effects for %d completed jobs (%d injected failures)", effects, n, injected.Load())
		}
	})
}

// TestClient_EnqueueUnique: concurrent enqueues of one unique key make one job.
func TestClient_EnqueueUnique(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		ids := make(chan int64, 50)
		var dups atomic.Int32
		errs := make(chan error, 50)
		for range 50 {
			go func() {
				res, err := c.Enqueue(context.Background(), &queue.EnqueueParams{Kind: "k", TenantID: "a", UniqueKey: "doc-1"})
				if err != nil {
					errs <- err
					return
				}
				if res.Duplicate {
					dups.Add(1)
				}
				ids <- res.Job.ID
			}()
		}
		first := int64(0)
		for range 50 {
			select {
			case err := <-errs:
				t.Fatalf("Enqueue: %v", err)
			case id := <-ids:
				if first == 0 {
					first = id
				} else if id != first {
					t.Fatalf("ids %d and %d for one unique key", first, id)
				}
			}
		}
		if dups.Load() != 49 {
			t.Fatalf("%d duplicates, want 49", dups.Load())
		}
	})
}

// TestWorker_GracefulShutdown: shutdown stops claiming, lets running jobs finish and
// releases, without spending an attempt, those that outlast the grace.
func TestWorker_GracefulShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		grace    time.Duration
		want     queue.State
		attempts int
	}{
		{"finish within grace", 5 * time.Second, queue.StateCompleted, 1},
		{"release after grace", 50 * time.Millisecond, queue.StatePending, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, s *store) {
				ctx := context.Background()
				c := queue.NewClient(s.driver, queue.ClientConfig{})
				var started atomic.Int32
				h := queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
					started.Add(1)
					select {
					case <-time.After(500 * time.Millisecond):
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
				cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, 8)
				cfg.ShutdownGrace = tc.grace
				// Leases long enough that a loaded machine's late heartbeat
				// cannot end an attempt: what ends them here is the shutdown.
				cfg.LeaseDuration = 20 * time.Second
				params := make([]*queue.EnqueueParams, 108)
				for i := range params {
					params[i] = &queue.EnqueueParams{Kind: "work", TenantID: fmt.Sprintf("t%d", i%8)}
				}
				res, err := c.EnqueueMany(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				var first []*queue.Job
				for _, r := range res[:8] {
					first = append(first, r.Job)
				}
				_, stop := startWorker(t, c, cfg)
				waitFor(t, 10*time.Second, "8 jobs running", func() bool { return started.Load() == 8 })
				begin := time.Now()
				stop()
				if d := time.Since(begin); d > tc.grace+time.Second {
					t.Errorf("shutdown took %s, want under grace %s + 1s", d, tc.grace)
				}
				if n := started.Load(); n != 8 {
					t.Errorf("%d jobs started, want 8: claims went on after shutdown began", n)
				}
				for _, j := range first {
					got, err := c.Get(ctx, j.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.State != tc.want || got.Attempt != tc.attempts {
						t.Errorf("job %d: %s attempt %d, want %s attempt %d", j.ID, got.State, got.Attempt, tc.want, tc.attempts)
					}
				}
			})
		})
	}
}

// TestWorker_HeartbeatKeepsLease: heartbeats keep a job that runs several leases long
// alive: one execution, never rescued. The lease is 1.5 s: with 400 ms,
// CI under its full load once saw one execution (attempt 2) and one rescue
// (2026-11-25). A claim is bounded by a lease (Worker.claim): one slower
// than 400 ms had committed on the server and was given up on by the
// client, so attempt 1 had no handler and was rescued after its lease,
// which is the rescuer doing its job, not this test's subject.
func TestWorker_HeartbeatKeepsLease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		l := newLedger()
		var rescued atomic.Int32
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			l.record(task)
			select {
			case <-time.After(4 * time.Second): // over 2.5 leases
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"long": {Handler: h}}, 2)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 1500*time.Millisecond, 250*time.Millisecond
		cfg.Hooks.Maintained = func(task string, n int) {
			if task == "rescue" {
				rescued.Add(int32(n))
			}
		}
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "long", TenantID: "a"})
		waitState(t, c, job.ID, queue.StateCompleted, 20*time.Second)
		if n := l.count(job.ID); n != 1 || rescued.Load() != 0 {
			t.Fatalf("%d executions (attempts %v), %d rescues; want 1 and 0", n, l.attempts(job.ID), rescued.Load())
		}
	})
}

// Cancelling a running job cancels its handler's context and fences it.
func TestClient_CancelRunning(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		running := make(chan struct{})
		cause := make(chan error, 1)
		h := queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
			close(running)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
		ran2 := make(chan struct{})
		h2 := queue.HandlerFunc(func(context.Context, *queue.Task) error { close(ran2); return nil })
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}, "k2": {Handler: h2}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "a"})
		<-running
		if _, err := c.Cancel(ctx, job.ID, "a"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-cause:
			if !errors.Is(err, queue.ErrLeaseLost) {
				t.Errorf("cause = %v, want ErrLeaseLost", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("handler not cancelled")
		}
		got := waitState(t, c, job.ID, queue.StateCancelled, time.Second)
		if got.Attempt != 1 {
			t.Errorf("attempt = %d", got.Attempt)
		}
		// The second job of the tenant runs: the slot was freed.
		next := enqueue(t, c, &queue.EnqueueParams{Kind: "k2", TenantID: "a"})
		select {
		case <-ran2:
		case <-time.After(5 * time.Second):
			t.Fatal("the tenant's next job did not run: its slot was not freed")
		}
		waitState(t, c, next.ID, queue.StateCompleted, 5*time.Second)
		if _, err := c.Cancel(ctx, next.ID, "a"); !errors.Is(err, queue.ErrConflict) {
			t.Errorf("cancel of a completed job: %v, want ErrConflict", err)
		}
	})
}
