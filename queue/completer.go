package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// completerBatchMax caps how many finishes one store call carries.
const completerBatchMax = 1000

// completerJoinAt is how many outcomes must be waiting before a second
// flusher starts a batch while another is in flight. Below it the waiting
// outcomes go in the next batch of the flusher in flight: one batch at a
// time grows with load (group commit), as several small ones would not.
const completerJoinAt = 128

// completerLinger is how long an idle flusher waits for more outcomes
// before storing a small batch while handlers are still running: the
// first outcome of a claimed batch would otherwise go alone, in a
// transaction of its own.
const completerLinger = time.Millisecond

// completer stores attempt outcomes in batches. It flushes at once when
// idle; finishes that arrive while a flush is in flight go in the next one,
// so batches grow with load and latency stays low when there is none. With
// several flushers (WorkerConfig.Completers) a second batch starts while
// one is in flight only once completerJoinAt outcomes wait.
//
// A failed flush is retried with backoff while the worker runs (the leases
// stay heartbeated meanwhile). At shutdown the completer keeps trying for
// at most flushBound, then gives up: what it could not store is left to
// the rescuer, as when a worker dies.
type completer struct {
	w        *Worker
	mu       sync.Mutex
	queue    []finishItem
	inFlight int // batches being stored
	stopped  bool
	kick     chan struct{} // buffered 1
	done     chan struct{} // closed by stop
	flushed  chan struct{} // closed by run after the last flush
	ctx      context.Context
	cancel   context.CancelFunc // ends run's store calls, flushBound after stop
}

type finishItem struct {
	task   *Task
	params *driver.JobFinishParams
	err    error // the handler's error, for hooks
	// running: the handler has not returned (the shutdown releases its
	// job), so a slot its cancelled attempt holds stays held.
	running bool
}

func newCompleter(w *Worker) *completer {
	return &completer{w: w, kick: make(chan struct{}, 1), done: make(chan struct{}), flushed: make(chan struct{})}
}

// submit queues a finish. After stop it drops the finish: the lease will
// expire and the job be rescued.
func (c *completer) submit(t *Task, p *driver.JobFinishParams, err error) {
	c.submitItem(finishItem{task: t, params: p, err: err})
}

// submitItem queues it; see submit.
func (c *completer) submitItem(it finishItem) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		c.w.logger.Warn("finish after shutdown dropped; the job will be rescued", "job_id", it.params.Lease.JobID)
		return
	}
	c.queue = append(c.queue, it)
	c.mu.Unlock()
	c.signal()
}

// signal wakes an idle flusher without blocking.
func (c *completer) signal() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// maxFinalFlush caps how long the shutdown waits for outcomes to be stored
// when the store refuses them.
const maxFinalFlush = 10 * time.Second

// flushBound is how long the shutdown keeps storing outcomes: no longer
// than a lease, after which the rescuer may have taken the jobs anyway.
func (c *completer) flushBound() time.Duration {
	return min(maxFinalFlush, c.w.cfg.LeaseDuration)
}

// stop flushes what is queued, ends run and waits for it, giving up after
// flushBound.
func (c *completer) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	close(c.done)
	giveUp := time.AfterFunc(c.flushBound(), c.cancel)
	defer giveUp.Stop()
	<-c.flushed
}

// start runs the completer's flushers (WorkerConfig.Completers) until
// stop; ctx ends their store calls.
func (c *completer) start(ctx context.Context, wg *sync.WaitGroup) {
	c.ctx, c.cancel = context.WithCancel(ctx)
	var flushers sync.WaitGroup
	for range c.w.cfg.Completers {
		flushers.Go(c.run)
	}
	wg.Go(func() {
		flushers.Wait()
		c.dropUnstored()
		c.cancel()
		close(c.flushed)
	})
}

// run is one flusher: it stores what is queued whenever kicked, and what
// is left at stop.
func (c *completer) run() {
	for {
		select {
		case <-c.kick:
			c.flushAll(c.ctx)
		case <-c.done:
			c.flushAll(c.ctx)
			return
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *completer) flushAll(ctx context.Context) {
	var backoff time.Duration
	c.linger(ctx)
	for {
		c.mu.Lock()
		if c.inFlight > 0 && len(c.queue) < completerJoinAt {
			// The flusher in flight takes them when it returns.
			c.mu.Unlock()
			return
		}
		n := min(len(c.queue), completerBatchMax)
		batch := c.queue[:n:n]
		c.queue = c.queue[n:]
		more := len(c.queue) >= completerJoinAt
		if n > 0 {
			c.inFlight++
		}
		c.mu.Unlock()
		if n == 0 {
			return
		}
		if more {
			c.signal() // for another flusher
		}
		err := c.flush(ctx, batch)
		if errors.Is(err, driver.ErrInvalid) {
			batch, err = c.isolate(ctx, batch)
		}
		c.mu.Lock()
		c.inFlight--
		if err != nil {
			c.queue = append(batch, c.queue...)
		}
		c.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
			c.w.logger.Warn("storing job outcomes failed; retrying", "jobs", n, "error", err, "backoff", backoff)
			if !sleepCtx(ctx, backoff) {
				return
			}
		}
	}
}

// completedInTx reports whether the attempt of it, whose outcome the store
// refused as a lost lease, was completed by its handler's own transaction:
// the shutdown releases handlers that ignore their cancellation, one of
// them may have called CompleteTx and be about to commit, and then the
// release finds the lease gone because the completion committed. Only the
// store knows whether it did (the handler may yet fail to commit).
func (c *completer) completedInTx(ctx context.Context, it finishItem) bool {
	if !it.task.completedInTxDone() {
		return false
	}
	j, err := c.w.exec.JobGet(ctx, it.params.Lease.JobID)
	return err == nil && j.State == StateCompleted && j.Attempt == it.params.Lease.Attempt
}

// isolate stores, one at a time, the outcomes of a batch the store refused
// as a whole (driver.ErrInvalid: an outcome it cannot take, such as a
// result its JSON type rejects), so that one bad outcome does not hold back
// the others: retried as a batch, it would fail every batch it joined, for
// as long as the worker runs. An outcome refused alone is stored as a
// failure of its attempt instead, with the store's error as the message and
// no result; one refused even so is given up on, its lease left to expire
// (as at shutdown). After any other failure isolate returns the outcomes
// not stored yet, for the caller to retry.
func (c *completer) isolate(ctx context.Context, batch []finishItem) ([]finishItem, error) {
	for i := range batch {
		it := &batch[i]
		err := c.flush(ctx, batch[i:i+1])
		if errors.Is(err, driver.ErrInvalid) {
			c.w.logger.Error("the store refused a job outcome; storing the attempt as failed instead",
				"job_id", it.params.Lease.JobID, "attempt", it.params.Lease.Attempt, "outcome", it.params.Outcome, "error", err)
			it.params = refusedOutcome(it.params, err)
			it.err = err
			err = c.flush(ctx, batch[i:i+1])
		}
		if errors.Is(err, driver.ErrInvalid) {
			c.w.logger.Error("the store refused a job's failure too; its lease will expire and the job be rescued",
				"job_id", it.params.Lease.JobID, "error", err)
			c.w.active.remove(it.task)
			c.w.finished(it.task, "", err, "")
			continue
		}
		if err != nil {
			return batch[i:], err
		}
	}
	return nil, nil
}

// refusedOutcome is the failure stored for an attempt whose outcome p the
// store refused with err.
func refusedOutcome(p *driver.JobFinishParams, err error) *driver.JobFinishParams {
	return &driver.JobFinishParams{
		Lease: p.Lease, WorkerID: p.WorkerID, TxIdleLimit: p.TxIdleLimit, Outcome: OutcomeFailed,
		Error: storableText(fmt.Sprintf("the store refused the attempt's outcome (%s): %v", p.Outcome, err)),
	}
}

// linger waits up to completerLinger while the batch is small, no other
// flush is in flight and handlers are running whose outcomes could join it.
func (c *completer) linger(ctx context.Context) {
	c.mu.Lock()
	small := c.inFlight == 0 && len(c.queue) < completerJoinAt && !c.stopped
	c.mu.Unlock()
	if small && c.w.active.handlers() > 0 {
		sleepCtx(ctx, completerLinger)
	}
}

// dropUnstored gives up on the outcomes the shutdown could not store.
func (c *completer) dropUnstored() {
	c.mu.Lock()
	left := c.queue
	c.queue = nil
	c.mu.Unlock()
	if len(left) == 0 {
		return
	}
	c.w.logger.Error("shutdown: job outcomes could not be stored; their leases will expire and the jobs be rescued",
		"jobs", len(left), "bound", c.flushBound())
	for _, it := range left {
		c.w.active.remove(it.task)
	}
}

func (c *completer) flush(ctx context.Context, batch []finishItem) error {
	params := make([]*driver.JobFinishParams, len(batch))
	for i, it := range batch {
		params[i] = it.params
	}
	errs, err := c.w.exec.JobFinish(ctx, params)
	if err != nil {
		return err
	}
	queues := make(map[string]struct{})
	var lost []*Task  // returned handlers whose leases are lost
	children := false // a workflow step ended
	defer func() { c.w.releaseSlots(ctx, lost) }()
	for i, it := range batch {
		c.w.active.remove(it.task)
		queues[it.task.Job.Queue] = struct{}{}
		if errs[i] != nil {
			if c.completedInTx(ctx, it) {
				c.w.finished(it.task, OutcomeCompleted, nil, "")
				continue
			}
			c.w.logger.Warn("lease lost before the outcome was stored", "job_id", it.params.Lease.JobID,
				"attempt", it.params.Lease.Attempt, "outcome", it.params.Outcome)
			c.w.reportHeldLoss(it.task) // an AwaitEnd handler's, after a heartbeat outage
			it.task.markLost()
			if !it.running {
				lost = append(lost, it.task)
			}
			c.w.finished(it.task, "", errs[i], "")
			continue
		}
		c.w.finished(it.task, it.params.Outcome, it.err, it.params.Error)
		if it.task.Job.ParentID != 0 && (it.params.Outcome == OutcomeCompleted || it.params.Outcome == OutcomeFailed) {
			children = true
		}
	}
	// The tenants' slots are free in the store now: claim again.
	for q := range queues {
		c.w.wakeQueue(q)
	}
	if children {
		// A workflow step ended: its parent, in whatever queue, may be
		// pending again (a store without notifications says nothing).
		c.w.wakeClaimers("")
	}
	return nil
}
