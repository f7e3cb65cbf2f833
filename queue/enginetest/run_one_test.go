package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// finishes records what Hooks.Finished reports.
type finishes struct {
	mu   sync.Mutex
	list []finishRecord
}

type finishRecord struct {
	jobID   int64
	outcome queue.Outcome
	err     error
}

func (f *finishes) hook(job *queue.Job, outcome queue.Outcome, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, finishRecord{job.ID, outcome, err})
}

func (f *finishes) all() []finishRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]finishRecord(nil), f.list...)
}

// TestWorker_RunOne runs one job per call, with the outcome the handler's
// return asks for, stored before RunOne returns.
func TestWorker_RunOne(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		boom := errors.New("boom")
		handlers := map[string]queue.HandlerConfig{
			"ok": {Handler: queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
				task.SetResult(json.RawMessage(`{"pages":3}`))
				return task.Progress(ctx, "parsing", 40, "page 2")
			})},
			"flaky":   {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return boom })},
			"broken":  {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return queue.Permanent(boom) })},
			"sleepy":  {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return queue.Snooze(time.Hour) })},
			"panicky": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { panic("oops") })},
			"effect":  {Handler: queue.HandlerFunc(s.completeWithEffect)},
		}
		var fin finishes
		cfg := fastConfig(handlers, 4)
		cfg.Hooks.Finished = fin.hook
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if job, err := w.RunOne(ctx, queue.DefaultQueue); job != nil || err != nil {
			t.Fatalf("RunOne on an empty queue = %+v, %v; want nil, nil", job, err)
		}

		tests := []struct {
			kind    string
			state   queue.State
			attempt int
			outcome queue.Outcome
			errIs   error
			check   func(t *testing.T, job *queue.Job)
		}{
			{kind: "ok", state: queue.StateCompleted, attempt: 1, outcome: queue.OutcomeCompleted, check: func(t *testing.T, job *queue.Job) {
				var result struct{ Pages int }
				if err := json.Unmarshal(job.Result, &result); err != nil || result.Pages != 3 || job.Progress != 100 {
					t.Errorf("result %s, progress %d; want the result set and 100", job.Result, job.Progress)
				}
			}},
			{kind: "flaky", state: queue.StateScheduled, attempt: 1, outcome: queue.OutcomeRetry, errIs: boom, check: func(t *testing.T, job *queue.Job) {
				if job.ErrorMessage != "boom" {
					t.Errorf("error message %q, want boom", job.ErrorMessage)
				}
			}},
			{kind: "broken", state: queue.StateFailed, attempt: 1, outcome: queue.OutcomeFailed, errIs: boom},
			{kind: "sleepy", state: queue.StateScheduled, attempt: 0, outcome: queue.OutcomeSnoozed},
			{kind: "panicky", state: queue.StateScheduled, attempt: 1, outcome: queue.OutcomeRetry, check: func(t *testing.T, job *queue.Job) {
				fs := fin.all()
				var pe *queue.PanicError
				if !errors.As(fs[len(fs)-1].err, &pe) || pe.Value != "oops" {
					t.Errorf("hook error %v, want a PanicError of oops", fs[len(fs)-1].err)
				}
			}},
			{kind: "effect", state: queue.StateCompleted, attempt: 1, outcome: queue.OutcomeCompleted, check: func(t *testing.T, job *queue.Job) {
				if n, err := s.countEffects(ctx); err != nil || n != 1 {
					t.Errorf("effects %d, %v; want 1 (CompleteTx's transaction committed)", n, err)
				}
			}},
		}
		for i, tc := range tests {
			enqueued := enqueue(t, c, &queue.EnqueueParams{Kind: tc.kind, TenantID: "acme"})
			job, err := w.RunOne(ctx, queue.DefaultQueue)
			if err != nil || job == nil {
				t.Fatalf("%s: RunOne = %+v, %v", tc.kind, job, err)
			}
			if job.ID != enqueued.ID || job.State != tc.state || job.Attempt != tc.attempt {
				t.Fatalf("%s: RunOne returned job %d in %s, attempt %d; want job %d in %s, attempt %d",
					tc.kind, job.ID, job.State, job.Attempt, enqueued.ID, tc.state, tc.attempt)
			}
			fs := fin.all()
			if len(fs) != i+1 || fs[i].jobID != job.ID || fs[i].outcome != tc.outcome {
				t.Fatalf("%s: Finished hook calls %+v; want call %d for job %d with outcome %s", tc.kind, fs, i+1, job.ID, tc.outcome)
			}
			if tc.errIs != nil && !errors.Is(fs[i].err, tc.errIs) {
				t.Fatalf("%s: hook error %v, want %v", tc.kind, fs[i].err, tc.errIs)
			}
			if tc.check != nil {
				tc.check(t, job)
			}
		}
	})
}

// TestWorker_RunOneClaimsOne leaves every other job as it was, and the
// worker can Run afterwards.
func TestWorker_RunOneClaimsOne(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		runs := newLedger()
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error { runs.record(task); return nil })
		w, err := queue.NewWorker(c, fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 10))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, tenant := range []string{"a", "b", "c"} {
			ids = append(ids, enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: tenant}).ID)
		}
		job, err := w.RunOne(ctx, queue.DefaultQueue)
		if err != nil || job == nil || job.State != queue.StateCompleted {
			t.Fatalf("RunOne = %+v, %v", job, err)
		}
		if jobs, n := runs.total(); jobs != 1 || n != 1 {
			t.Fatalf("%d jobs ran %d times; want one job once", jobs, n)
		}
		for _, id := range ids {
			if id != job.ID {
				if j, err := c.Get(ctx, id); err != nil || j.State != queue.StatePending {
					t.Fatalf("job %d: %+v, %v; want it still pending", id, j, err)
				}
			}
		}
		// Run takes the rest: RunOne left the worker as built.
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		for _, id := range ids {
			waitState(t, c, id, queue.StateCompleted, 10*time.Second)
		}
		if _, err := w.RunOne(ctx, queue.DefaultQueue); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("RunOne during Run: %v, want ErrInvalid", err)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if _, err := w.RunOne(ctx, "elsewhere"); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("RunOne of a queue the worker lacks: %v, want ErrInvalid", err)
		}
	})
}

// TestWorker_RunOneContextEnds releases the job of a handler still running
// when RunOne's context ends, without spending an attempt.
func TestWorker_RunOneContextEnds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started := make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
		w, err := queue.NewWorker(c, fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1))
		if err != nil {
			t.Fatal(err)
		}
		enqueued := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "acme"})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		job, err := w.RunOne(ctx, queue.DefaultQueue)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("RunOne error %v, want context.Canceled", err)
		}
		if job == nil || job.ID != enqueued.ID || job.State != queue.StatePending || job.Attempt != 0 {
			t.Fatalf("RunOne returned %+v; want job %d pending with no attempt spent", job, enqueued.ID)
		}
	})
}

// TestWorker_RunOneAbandons releases the job of a handler that ignores the
// cancellation, and refuses to run more on that worker.
func TestWorker_RunOneAbandons(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started, release := make(chan struct{}), make(chan struct{})
		defer close(release)
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error {
			close(started)
			<-release // ignores its context
			return nil
		})
		w, err := queue.NewWorker(c, fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1))
		if err != nil {
			t.Fatal(err)
		}
		enqueued := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "acme"})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		job, err := w.RunOne(ctx, queue.DefaultQueue)
		if !errors.Is(err, context.Canceled) || job == nil || job.ID != enqueued.ID || job.State != queue.StatePending || job.Attempt != 0 {
			t.Fatalf("RunOne = %+v, %v; want job %d released (pending, no attempt spent) and context.Canceled", job, err, enqueued.ID)
		}
		if _, err := w.RunOne(context.Background(), queue.DefaultQueue); !errors.Is(err, queue.ErrInvalid) {
			t.Fatalf("RunOne after abandoning a handler: %v, want ErrInvalid", err)
		}
	})
}
