package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// RunOne claims at most one job of queue, one of the worker's queues, runs
// it as Run would and returns the job as stored once the attempt's outcome
// is: completed, scheduled again for a retry or a snooze, waiting for its
// steps (AwaitChildren; RunOne them, then run it again), or failed. The
// handler runs with everything a handler gets under Run (a real Task with
// its lease, heartbeats, the kind's timeout, Progress, CompleteTx, panics
// recovered, the retry policy, hooks and events); no maintenance or
// periodic jobs run. It returns a nil job and a nil error when no job of
// queue could be claimed: none is pending, or tenant limits or a pause
// hold them back.
//
// RunOne is for tests, and for programs that work jobs one at a time on
// their own schedule: call it as often as needed, one call at a time, and
// never while Run runs (either returns an error wrapping ErrInvalid
// then); Run may follow. When ctx ends before the handler returns, the
// handler is cancelled and its job released to pending without spending
// an attempt, as at the shutdown of Run; RunOne then returns the job with
// ctx's error. A handler that ignores that cancellation for a heartbeat
// interval is given up on, and the worker runs nothing more.
func (w *Worker) RunOne(ctx context.Context, queue string) (*Job, error) {
	if _, ok := w.cfg.Queues[queue]; !ok {
		return nil, fmt.Errorf("%w: worker %s has no queue %q", ErrInvalid, w.id, queue)
	}
	if !w.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("%w: worker %s: RunOne while Run or another RunOne runs, after Run, or after a handler ignored its cancellation", ErrInvalid, w.id)
	}
	abandoned := false
	defer func() {
		if !abandoned {
			// A completer stops once: leave a fresh one for the next
			// call or Run.
			w.completer = newCompleter(w)
			w.ran.Store(false)
		}
	}()

	storeCtx, stopStore := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStore()
	w.storeCtx = storeCtx
	w.workCtx, w.cancelWork = context.WithCancelCause(storeCtx)
	var bg sync.WaitGroup
	w.completer.start(storeCtx, &bg)
	bg.Go(func() { w.heartbeat(storeCtx) })
	unsubscribe := w.listenInProcess() // a Cancel through this process's client stops the handler at once

	job, err := w.claimOne(ctx, queue)
	if job != nil {
		var returned bool
		if returned, abandoned = w.awaitOne(ctx); !returned {
			err = ctx.Err()
		}
	}
	unsubscribe()
	w.completer.stop()
	stopStore()
	bg.Wait()
	if job == nil {
		return nil, err
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalWriteTimeout)
	defer cancel()
	stored, gerr := w.exec.JobGet(readCtx, job.ID)
	if gerr != nil {
		return nil, fmt.Errorf("read job %d after its attempt: %w", job.ID, gerr)
	}
	return stored, err
}

// claimOne claims one job of queue and starts it; nil when there was none.
// As for Run's claims, ctx does not cancel the claim: a job claimed as ctx
// ended is handed back (see Worker.claim).
func (w *Worker) claimOne(ctx context.Context, queue string) (*Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(w.storeCtx, w.cfg.LeaseDuration)
	defer cancel()
	sent := time.Now()
	jobs, _, err := w.exec.JobClaim(cctx, &driver.JobClaimParams{
		Queue: queue, WorkerID: w.id, Max: 1, LeaseDuration: w.cfg.LeaseDuration,
	})
	if err != nil {
		return nil, fmt.Errorf("claim a job of queue %s: %w", queue, err)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	if ctx.Err() != nil {
		w.releaseClaimed(jobs)
		return nil, ctx.Err()
	}
	if w.cfg.Hooks.Claimed != nil {
		w.cfg.Hooks.Claimed(jobs)
	}
	w.start(jobs[0], sent)
	return jobs[0], nil
}

// awaitOne waits for the handler RunOne started and reports whether it
// returned before ctx ended. When ctx ends first it cancels the handler
// (its job is released) and, if the handler ignores that for a heartbeat
// interval, releases the job and gives up on the handler, as Run's drain
// does: abandoned, the worker runs no more (its handler may still be
// running).
func (w *Worker) awaitOne(ctx context.Context) (returned, abandoned bool) {
	done := make(chan struct{})
	go func() { w.jobs.Wait(); close(done) }()
	select {
	case <-done:
		return true, false
	case <-ctx.Done():
	}
	w.active.cancelAll(w.cancelWork, errShutdown)
	select {
	case <-done:
		return false, false
	case <-time.After(w.cfg.HeartbeatInterval):
		w.releaseAbandoned()
		w.awaitHandOffs()
		if w.inHandler.Load() > 0 {
			return false, true // still running: given up on
		}
		// It returned after all, as the wait ran out: its goroutine may
		// still be ending the attempt (see handOffTimeout). Deciding on a
		// glance at done disabled the worker for good for a handler that
		// had returned.
		select {
		case <-done:
			return false, false
		case <-time.After(handOffTimeout):
			return false, true
		}
	}
}
