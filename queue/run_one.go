package queue

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// RunOne claims at most one job of queue, one of the worker's queues, runs
// it as Run would and returns the job as stored once the attempt's outcome
// is: completed, scheduled again for a retry or a snooze, or failed. The
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
// then). When ctx ends before the handler returns, the handler is
// cancelled and its job released to pending without spending an attempt,
// as at the shutdown of Run; RunOne then returns the job with ctx's error.
func (w *Worker) RunOne(ctx context.Context, queue string) (*Job, error) {
	if _, ok := w.cfg.Queues[queue]; !ok {
		return nil, fmt.Errorf("%w: worker %s has no queue %q", ErrInvalid, w.id, queue)
	}
	if !w.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("%w: worker %s is already running (Run or RunOne)", ErrInvalid, w.id)
	}
	defer w.ran.Store(false)
	// A completer stops once; each call gets its own, and leaves a fresh
	// one for the next call or Run.
	w.completer = newCompleter(w)
	defer func() { w.completer = newCompleter(w) }()

	storeCtx, stopStore := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStore()
	w.storeCtx = storeCtx
	w.workCtx, w.cancelWork = context.WithCancelCause(storeCtx)
	var bg sync.WaitGroup
	w.completer.start(storeCtx, &bg)
	bg.Go(func() { w.heartbeat(storeCtx) })
	unsubscribe := w.listenInProcess() // a Cancel through this process's client stops the handler at once

	job, err := w.claimOne(ctx, queue)
	if job != nil && !w.awaitOne(ctx) {
		err = ctx.Err()
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
func (w *Worker) claimOne(ctx context.Context, queue string) (*Job, error) {
	jobs, err := w.exec.JobClaim(ctx, &JobClaimParams{
		Queue: queue, WorkerID: w.id, Max: 1, LeaseDuration: w.cfg.LeaseDuration,
	})
	if err != nil {
		return nil, fmt.Errorf("claim a job of queue %s: %w", queue, err)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	if w.cfg.Hooks.Claimed != nil {
		w.cfg.Hooks.Claimed(jobs)
	}
	w.start(jobs[0])
	return jobs[0], nil
}

// awaitOne waits for the handler RunOne started and reports whether it
// returned before ctx ended. When ctx ends first it cancels the handler
// (its job is released) and, if the handler ignores that, releases the
// job after a heartbeat interval, as Run's drain does.
func (w *Worker) awaitOne(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { w.jobs.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	w.cancelWork(errShutdown)
	select {
	case <-done:
	case <-time.After(w.cfg.HeartbeatInterval):
		w.releaseAbandoned()
	}
	return false
}
