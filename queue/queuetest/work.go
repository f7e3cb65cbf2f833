package queuetest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket/queue"
)

// Result is what one attempt of a job worked by Work or WorkJob came to.
type Result struct {
	// Job is the job as stored after the attempt: completed, scheduled
	// again (a retry or a snooze) or failed.
	Job *queue.Job
	// Outcome is how the attempt ended: completed, retry, failed or
	// snoozed.
	Outcome queue.Outcome
	// Err is what the handler returned (a *queue.PanicError if it
	// panicked); nil when it succeeded.
	Err error
}

// Work enqueues a job with params, then runs it once with handler as
// WorkJob does, and returns the attempt's result. params.Kind names the
// kind handler is registered for.
func Work(ctx context.Context, tb testing.TB, client *queue.Client, handler queue.Handler, params *queue.EnqueueParams) *Result {
	tb.Helper()
	res, err := client.Enqueue(ctx, params)
	if err != nil {
		tb.Fatalf("queuetest: enqueue a job of kind %q: %v", params.Kind, err)
		return nil
	}
	if res.Duplicate {
		tb.Fatalf("queuetest: the unique key %q matched %s; Work runs a new job", params.UniqueKey, describeJob(res.Job))
		return nil
	}
	return WorkJob(ctx, tb, client, handler, res.Job)
}

// WorkJob runs one attempt of a stored job with handler, synchronously,
// and returns its result once the outcome is stored. The handler gets
// what it gets from a queue.Worker: a real Task (lease, heartbeats,
// Progress, SetResult, CompleteTx), panics recovered, and the outcome its
// error asks for under the worker's default retry policy (Permanent,
// Snooze, a retry with backoff, failed once attempts run out). It runs on
// a worker of its own (queue.Worker.RunOne) with handler registered for
// the job's kind, so several tests may each work jobs of their own store
// in parallel.
//
// The job must be the one a worker would claim next from its queue: due
// (pending), with no other job of its queue pending, its tenant and queue
// not paused, and its tenant below its concurrency limit. Otherwise
// WorkJob fails the test, saying which condition does not hold, and
// changes nothing; give the job a queue of its own (EnqueueParams.Queue)
// when the store holds other pending jobs.
func WorkJob(ctx context.Context, tb testing.TB, client *queue.Client, handler queue.Handler, job *queue.Job) *Result {
	tb.Helper()
	if !checkNext(ctx, tb, client, job) {
		return nil
	}
	var (
		mu       sync.Mutex
		result   Result
		finished bool
		other    *queue.Job
	)
	guarded := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		if t.Job.ID != job.ID {
			// Enqueued by another goroutine since the check: put it
			// back at once, without spending an attempt.
			mu.Lock()
			other = t.Job
			mu.Unlock()
			return queue.Snooze(0)
		}
		return handler.Work(ctx, t)
	})
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		ID:          "queuetest",
		Queues:      map[string]queue.QueueConfig{job.Queue: {MaxWorkers: 1}},
		Handlers:    map[string]queue.HandlerConfig{job.Kind: {Handler: guarded}},
		Maintenance: queue.MaintenanceConfig{Disabled: true},
		Hooks: queue.Hooks{Finished: func(j *queue.Job, outcome queue.Outcome, err error) {
			mu.Lock()
			defer mu.Unlock()
			if j.ID == job.ID {
				result.Outcome, result.Err, finished = outcome, err, true
			}
		}},
	})
	if err != nil {
		tb.Fatalf("queuetest: build a worker for kind %q: %v", job.Kind, err)
		return nil
	}
	stored, err := w.RunOne(ctx, job.Queue)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err != nil:
		tb.Fatalf("queuetest: work job %d: %v", job.ID, err)
		return nil
	case stored == nil:
		tb.Fatalf("queuetest: job %d of queue %q could not be claimed: is its tenant %q running as many jobs as its limit allows?",
			job.ID, job.Queue, job.TenantID)
		return nil
	case other != nil:
		tb.Fatalf("queuetest: claimed %s instead of job %d, enqueued since WorkJob checked the queue; it was put back", describeJob(other), job.ID)
		return nil
	case !finished:
		tb.Fatalf("queuetest: job %d: its attempt's outcome was not stored (now %s)", job.ID, stored.State)
		return nil
	}
	result.Job = stored
	return &result
}

// checkNext fails the test unless job is the next a worker would claim
// from its queue.
func checkNext(ctx context.Context, tb testing.TB, client *queue.Client, job *queue.Job) bool {
	tb.Helper()
	cur, err := client.Get(ctx, job.ID)
	if err != nil {
		tb.Fatalf("queuetest: read job %d: %v", job.ID, err)
		return false
	}
	if cur.State != queue.StatePending {
		when := ""
		if cur.State == queue.StateScheduled {
			when = " until " + cur.RunAt.Format("15:04:05.000")
		}
		tb.Fatalf("queuetest: job %d is %s%s; WorkJob runs a job that is due (pending)", job.ID, cur.State, when)
		return false
	}
	pending, err := client.List(ctx, &queue.JobListParams{Queue: cur.Queue, States: []queue.State{queue.StatePending}, Limit: 4})
	if err != nil {
		tb.Fatalf("queuetest: list the pending jobs of queue %q: %v", cur.Queue, err)
		return false
	}
	var others []string
	for _, j := range pending {
		if j.ID != job.ID {
			others = append(others, describeJob(j))
		}
	}
	if len(others) > 0 {
		tb.Fatalf("queuetest: queue %q has other pending jobs, which a worker could claim before job %d: %s; "+
			"give the job a queue of its own (EnqueueParams.Queue)", cur.Queue, job.ID, strings.Join(others, "; "))
		return false
	}
	pos, err := client.Position(ctx, job.ID)
	if err != nil {
		tb.Fatalf("queuetest: position of job %d: %v", job.ID, err)
		return false
	}
	if pos.Paused {
		tb.Fatalf("queuetest: job %d waits: its queue %q or tenant %q is paused", job.ID, cur.Queue, cur.TenantID)
		return false
	}
	return true
}
