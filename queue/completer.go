package queue

import (
	"context"
	"sync"
	"time"
)

// completerBatchMax caps how many finishes one store call carries.
const completerBatchMax = 1000

// completer stores attempt outcomes in batches. It flushes at once when
// idle; finishes that arrive while a flush is in flight go in the next one,
// so batches grow with load and latency stays low when there is none.
type completer struct {
	w       *Worker
	mu      sync.Mutex
	queue   []finishItem
	stopped bool
	kick    chan struct{} // buffered 1
	done    chan struct{} // closed by stop
	flushed chan struct{} // closed by run after the last flush
}

type finishItem struct {
	task   *Task
	params *JobFinishParams
	err    error // the handler's error, for hooks
}

func newCompleter(w *Worker) *completer {
	return &completer{w: w, kick: make(chan struct{}, 1), done: make(chan struct{}), flushed: make(chan struct{})}
}

// submit queues a finish. After stop it drops the finish: the lease will
// expire and the job be rescued.
func (c *completer) submit(t *Task, p *JobFinishParams, err error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		c.w.logger.Warn("finish after shutdown dropped; the job will be rescued", "job_id", p.Lease.JobID)
		return
	}
	c.queue = append(c.queue, finishItem{task: t, params: p, err: err})
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// finalFlushTimeout bounds the last flush at shutdown, when the store may
// be unreachable; finishes it cannot store are rescued later.
const finalFlushTimeout = 10 * time.Second

// stop flushes what is queued, ends run and waits for it.
func (c *completer) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	close(c.done)
	<-c.flushed
}

func (c *completer) run(ctx context.Context) {
	defer close(c.flushed)
	for {
		select {
		case <-c.kick:
			c.flushAll(ctx)
		case <-c.done:
			fctx, cancel := context.WithTimeout(ctx, finalFlushTimeout)
			c.flushAll(fctx)
			cancel()
			return
		case <-ctx.Done():
			return
		}
	}
}

func (c *completer) flushAll(ctx context.Context) {
	var backoff time.Duration
	for {
		c.mu.Lock()
		n := min(len(c.queue), completerBatchMax)
		batch := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()
		if n == 0 {
			return
		}
		if err := c.flush(ctx, batch); err != nil {
			// Keep the batch and try again; the leases stay heartbeated
			// meanwhile.
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
			c.w.logger.Warn("storing job outcomes failed; retrying", "jobs", n, "error", err, "backoff", backoff)
			c.mu.Lock()
			c.queue = append(batch, c.queue...)
			c.mu.Unlock()
			if !sleepCtx(ctx, backoff) {
				return
			}
		}
	}
}

func (c *completer) flush(ctx context.Context, batch []finishItem) error {
	params := make([]*JobFinishParams, len(batch))
	for i, it := range batch {
		params[i] = it.params
	}
	errs, err := c.w.exec.JobFinish(ctx, params)
	if err != nil {
		return err
	}
	queues := make(map[string]struct{})
	for i, it := range batch {
		c.w.active.remove(it.task)
		queues[it.task.Job.Queue] = struct{}{}
		if errs[i] != nil {
			c.w.logger.Warn("lease lost before the outcome was stored", "job_id", it.params.Lease.JobID,
				"attempt", it.params.Lease.Attempt, "outcome", it.params.Outcome)
			it.task.markLost()
			c.w.finished(it.task, "", errs[i], "")
			continue
		}
		c.w.finished(it.task, it.params.Outcome, it.err, it.params.Error)
	}
	// The tenants' slots are free in the store now: claim again.
	for q := range queues {
		c.w.wakeQueue(q)
	}
	return nil
}
