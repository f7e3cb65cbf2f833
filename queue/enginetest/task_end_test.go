package queue_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestTask_SetResult: the result a handler records is stored with the
// completion.
func TestTask_SetResult(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			task.SetResult(json.RawMessage(`{"width":640}`))
			return nil
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"r": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "r", TenantID: "t1"})
		got := waitState(t, c, job.ID, queue.StateCompleted, 10*time.Second)
		var v map[string]int
		if err := json.Unmarshal(got.Result, &v); err != nil || v["width"] != 640 {
			t.Fatalf("Result = %s (%v), want {\"width\":640}", got.Result, err)
		}
	})
}

// endRecorder records the hooks an attempt ended by another holder of its
// lease fires.
type endRecorder struct {
	mu       sync.Mutex
	outcomes []queue.Outcome
	lost     int
}

func (r *endRecorder) hooks() queue.Hooks {
	return queue.Hooks{
		Finished: func(_ *queue.Job, o queue.Outcome, _ error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.outcomes = append(r.outcomes, o)
		},
		LeaseLost: func(queue.Lease) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.lost++
		},
	}
}

func (r *endRecorder) get() ([]queue.Outcome, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]queue.Outcome(nil), r.outcomes...), r.lost
}

// TestTask_EndedBy: an attempt completed through its lease by another
// party (as an HTTP endpoint does through the API) is not finished a second
// time by the worker and is not reported as a lost lease, even when a
// heartbeat finds the lease gone before the handler finds out; the job is
// completed once, with the other party's result.
func TestTask_EndedBy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		exec := s.driver.Executor()
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			task.AwaitEnd()
			errs, err := exec.JobFinish(ctx, []*driver.JobFinishParams{{
				Lease: task.Lease(), Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`{"by":"endpoint"}`), WorkerID: "endpoint",
			}})
			if err != nil || errs[0] != nil {
				t.Errorf("JobFinish: %v %v", err, errs)
			}
			<-ctx.Done()                                  // the heartbeat finds the lease gone
			if context.Cause(ctx) != queue.ErrLeaseLost { //nolint:errorlint // sentinel identity
				t.Errorf("cause %v, want ErrLeaseLost", context.Cause(ctx))
			}
			task.EndedBy(queue.OutcomeCompleted, "")
			return nil
		})
		var rec endRecorder
		cfg := fastConfig(map[string]queue.HandlerConfig{"x": {Handler: h}}, 1)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Hooks = rec.hooks()
		startWorker(t, c, cfg)
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "x", TenantID: "t1"})
		var outcomes []queue.Outcome
		waitFor(t, 10*time.Second, "the Finished hook", func() bool { outcomes, _ = rec.get(); return len(outcomes) > 0 })
		got := waitState(t, c, job.ID, queue.StateCompleted, time.Second)
		var res map[string]string
		if err := json.Unmarshal(got.Result, &res); err != nil || res["by"] != "endpoint" {
			t.Errorf("Result = %s", got.Result)
		}
		atts, err := c.Attempts(context.Background(), job.ID)
		if err != nil || len(atts) != 1 || atts[0].Outcome != queue.OutcomeCompleted {
			t.Errorf("attempts %+v (%v), want one completed", atts, err)
		}
		outcomes, lost := rec.get()
		if len(outcomes) != 1 || outcomes[0] != queue.OutcomeCompleted || lost != 0 {
			t.Errorf("hooks: outcomes %v, lease losses %d; want [completed], 0", outcomes, lost)
		}
	})
}

// TestTask_AwaitEndLost: a handler awaiting another party's end whose lease
// is lost otherwise (cancelled) still reports the loss once.
func TestTask_AwaitEndLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started := make(chan int64, 1)
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			task.AwaitEnd()
			started <- task.Job.ID
			<-ctx.Done()
			return context.Cause(ctx)
		})
		var rec endRecorder
		cfg := fastConfig(map[string]queue.HandlerConfig{"x": {Handler: h}}, 1)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Hooks = rec.hooks()
		startWorker(t, c, cfg)
		enqueue(t, c, &queue.EnqueueParams{Kind: "x", TenantID: "t1"})
		id := <-started
		if _, err := s.driver.Executor().JobCancel(context.Background(), &driver.JobCancelParams{ID: id}); err != nil {
			t.Fatalf("JobCancel: %v", err)
		}
		// A hang check: under a loaded CI run the heartbeat that finds the
		// lease gone, or the refused finish, came past 10 s once.
		waitFor(t, 30*time.Second, "the lease loss reported", func() bool { _, lost := rec.get(); return lost >= 1 })
		if _, lost := rec.get(); lost != 1 {
			t.Fatalf("lease loss reported %d times, want once", lost)
		}
	})
}
