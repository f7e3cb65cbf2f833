package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// start runs a job on its own goroutine; claimed is when its claim was
// sent (its lease runs at least a lease duration from then).
func (w *Worker) start(job *Job, claimed time.Time) {
	t := &Task{Job: job, w: w, lease: job.Lease(), partial: job.PartialResult}
	ctx, cancel := context.WithCancelCause(w.workCtx)
	runCtx, stopTimeout := ctx, context.CancelFunc(func() {})
	var timeout time.Duration
	if h, ok := w.cfg.Handlers[job.Kind]; ok && h.Timeout > 0 {
		timeout = h.Timeout
		runCtx, stopTimeout = context.WithTimeoutCause(ctx, timeout, ErrJobTimeout)
	}
	w.active.add(t, cancel, claimed, timeout)
	w.publishTask(EventStarted, t)
	w.inHandler.Add(1)
	w.jobs.Go(func() {
		err := w.runHandler(runCtx, t)
		w.inHandler.Add(-1)
		cause := context.Cause(runCtx) // before stopTimeout cancels it
		stopTimeout()
		cancel(nil)
		settled := w.active.handlerReturned(t)
		w.wakeQueue(job.Queue)
		if !settled {
			// The shutdown released the job while this handler ignored its
			// cancellation: the job is pending again and its result dropped
			// (unless the handler's transaction completed it first; the
			// release reported that, see completer.flush).
			if !t.completedInTxDone() {
				w.logger.Warn("handler returned after its job was released; result dropped",
					"job_id", t.lease.JobID, "attempt", t.lease.Attempt)
			}
			return
		}
		defer w.active.handOn()
		w.finish(t, err, cause)
	})
}

// checkStuck gives up on a handler that has not returned long after its
// context was cancelled (the activeSet's stuck timer): its slot goes to
// another job and its lease is left to expire.
func (w *Worker) checkStuck(t *Task) {
	if !w.active.abandon(t) {
		return
	}
	w.logger.Error("handler stuck after cancellation; abandoning its lease", "job_id", t.lease.JobID,
		"kind", t.Job.Kind, "threshold", w.cfg.StuckThreshold)
	if w.cfg.Hooks.Stuck != nil {
		w.cfg.Hooks.Stuck(t.snapshot())
	}
	w.wakeQueue(t.Job.Queue)
}

func (w *Worker) runHandler(ctx context.Context, t *Task) (err error) {
	h, ok := w.cfg.Handlers[t.Job.Kind]
	if !ok {
		return Permanent(fmt.Errorf("no handler registered for kind %q", t.Job.Kind))
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	err = h.Handler.Work(ctx, t)
	if err == nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrJobTimeout) {
		if outcome, _ := t.ended(); outcome == "" { // an attempt ended before its timeout stays ended
			err = ErrJobTimeout
		}
	}
	return err
}

// finalWriteTimeout bounds the last progress write of an attempt.
const finalWriteTimeout = 5 * time.Second

// finish decides the outcome of an attempt the handler's return settled
// (activeSet.handlerReturned) from the handler's error and the cause its
// context was cancelled with (nil if it was not), and hands it to the
// completer.
func (w *Worker) finish(t *Task, err, cause error) {
	if outcome, message := t.ended(); outcome != "" && err == nil {
		t.stopProgress() // a held-back write would only be fenced out
		w.active.remove(t)
		w.finished(t, outcome, nil, message)
		return
	}
	// A handler cancelled because its heartbeats failed until the lease ran
	// out, whose lease the store has not said is gone, has its outcome
	// written as usual: the lease is still renewed for that (activeSet.lose),
	// and the write is fenced by it (the completer reports ErrLeaseLost if
	// the store refuses it).
	if errors.Is(cause, ErrLeaseLost) && w.active.leaseGone(t) {
		if s := stoppedBy(cause); s != nil {
			w.logger.Info(s.Error()+"; result dropped", "job_id", t.lease.JobID, "attempt", t.lease.Attempt)
		} else {
			w.logger.Warn("lease lost; result dropped", "job_id", t.lease.JobID, "attempt", t.lease.Attempt)
		}
		w.reportHeldLoss(t)
		w.releaseSlots(w.storeCtx, []*Task{t})
		w.active.remove(t)
		w.finished(t, "", ErrLeaseLost, "")
		return
	}
	if err == nil && !validResult(t.resultSet()) {
		err = Permanent(errResultNotJSON)
	}
	p := &driver.JobFinishParams{Lease: t.lease, WorkerID: w.id}
	var snooze *SnoozeError
	var permanent *PermanentError
	switch {
	case err == nil:
		p.Outcome, p.Result = OutcomeCompleted, t.resultSet()
	case errors.Is(cause, errShutdown):
		p.Outcome = OutcomeReleased
	case errors.As(err, &snooze):
		p.Outcome, p.RetryIn = OutcomeSnoozed, snooze.Delay
	case errors.Is(err, errAwaitChildren):
		p.Outcome = OutcomeWaiting
	case errors.As(err, &permanent), t.Job.Attempt >= t.Job.MaxAttempts:
		p.Outcome, p.Error = OutcomeFailed, errorText(err, cause)
	default:
		p.Outcome, p.Error, p.RetryIn = OutcomeRetry, errorText(err, cause), w.backoff(t.Job)(t.Job.Attempt)
	}
	if final := t.finalProgress(p.Outcome == OutcomeCompleted, false); final != nil {
		// The handler's context is cancelled by now (its timeout, the
		// shutdown, or the end of the attempt): write with the worker's.
		ctx, cancel := context.WithTimeout(w.storeCtx, finalWriteTimeout)
		if perr := t.writeProgress(ctx, final); perr != nil && !isLeaseLost(perr) {
			w.logger.Warn("final progress write failed", "job_id", t.lease.JobID, "error", perr)
		}
		cancel()
	}
	w.completer.submit(t, p, err)
}

// releaseSlots frees the tenant slots that the attempts of tasks, whose
// leases are lost and whose handlers have returned, may still hold: a
// cancelled attempt keeps its slot until then (see
// driver.Executor.JobCancel). A release that fails is left to the rescue
// sweep, which frees the slot once the lease has expired.
func (w *Worker) releaseSlots(ctx context.Context, tasks []*Task) {
	if len(tasks) == 0 {
		return
	}
	leases := make([]Lease, len(tasks))
	for i, t := range tasks {
		leases[i] = t.lease
	}
	ctx, cancel := context.WithTimeout(ctx, finalWriteTimeout)
	defer cancel()
	n, err := w.exec.JobSlotRelease(ctx, leases)
	if err != nil {
		w.logger.Warn("freeing the slots of cancelled jobs failed; they are freed when their leases expire",
			"jobs", len(leases), "error", err)
		return
	}
	if n > 0 {
		for _, t := range tasks {
			w.wakeQueue(t.Job.Queue)
		}
	}
}

// reportHeldLoss reports the loss of t's lease that activeSet.lose held
// back because its handler had called AwaitEnd, if it did: the handler
// returned without EndedBy, or the outcome written after a heartbeat
// outage was refused.
func (w *Worker) reportHeldLoss(t *Task) {
	if t.lossReportHeld() && w.cfg.Hooks.LeaseLost != nil {
		w.cfg.Hooks.LeaseLost(t.lease)
	}
}

func errorText(err, cause error) string {
	if errors.Is(cause, ErrJobTimeout) && !errors.Is(err, ErrJobTimeout) {
		return storableText(fmt.Sprintf("%s: %v", ErrJobTimeout, err))
	}
	return storableText(err.Error())
}

// storableText is s as every store can keep it in a text column: invalid
// UTF-8 and NUL bytes (which PostgreSQL's text refuses) become U+FFFD. An
// error's text is whatever the handler made it, a file's bytes included.
func storableText(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// errResultNotJSON fails an attempt whose handler returned nil after
// Task.SetResult with bytes that are not a JSON document: stored, they
// would be refused by PostgreSQL, and read back broken from SQLite.
var errResultNotJSON = errors.New("queue: the job's result (Task.SetResult) is not valid JSON")

// validResult reports whether r is empty (no result) or a JSON document.
func validResult(r json.RawMessage) bool {
	return len(r) == 0 || json.Valid(r)
}

func (w *Worker) backoff(job *Job) Backoff {
	if h, ok := w.cfg.Handlers[job.Kind]; ok && h.Backoff != nil {
		return h.Backoff
	}
	return w.cfg.Backoff
}

// finished reports an attempt's end to hooks and subscribers.
func (w *Worker) finished(t *Task, outcome Outcome, err error, message string) {
	event, state := EventLeaseLost, State("")
	switch outcome {
	case OutcomeCompleted:
		event, state = EventCompleted, StateCompleted
	case OutcomeRetry:
		event, state = EventRetrying, StateScheduled
	case OutcomeFailed:
		event, state = EventFailed, StateFailed
	case OutcomeSnoozed:
		event, state = EventSnoozed, StateScheduled
	case OutcomeReleased:
		event, state = EventReleased, StatePending
	case OutcomeWaiting:
		event, state = EventWaiting, StateWaiting
	}
	listening := w.client.bus.ListeningTo(event)
	if w.cfg.Hooks.Finished == nil && !listening {
		return
	}
	job := t.snapshot()
	job.ErrorMessage = message
	if w.cfg.Hooks.Finished != nil {
		w.cfg.Hooks.Finished(job, outcome, err)
	}
	if !listening {
		return
	}
	if state != "" {
		job.State = state
	}
	if outcome == OutcomeCompleted {
		job.Progress = 100
	}
	w.publish(event, job)
}

func (t *Task) completedInTxDone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.completedInTx
}
