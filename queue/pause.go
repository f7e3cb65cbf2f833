package queue

import (
	"context"
	"fmt"
	"sync"

	"github.com/docketq/docket/queue/driver"
)

// PauseQueue stops claims from queue in every process that shares the
// store: from the next claim on (each claim reads the pause from the store,
// so within one poll of any worker), no job of the queue starts. Jobs
// already running finish normally (they complete, retry, heartbeat as
// usual); enqueues still succeed, and pending jobs keep their order. A
// queue with no jobs yet can be paused; the pause stays until
// ResumeQueue. Pausing a paused queue changes nothing.
func (c *Client) PauseQueue(ctx context.Context, queue string) error {
	return c.setQueuePause(ctx, queue, true)
}

// ResumeQueue lets claims of queue start again where they stopped, and
// wakes the queue's workers (in this process at once, in others through
// the driver's notifier, else at their next poll). Resuming a queue that
// is not paused changes nothing.
func (c *Client) ResumeQueue(ctx context.Context, queue string) error {
	if err := c.setQueuePause(ctx, queue, false); err != nil {
		return err
	}
	c.wake.call(queue)
	return nil
}

func (c *Client) setQueuePause(ctx context.Context, queue string, paused bool) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	if err := c.exec.QueuePauseSet(ctx, &driver.QueuePauseParams{Queue: queue, Paused: paused}); err != nil {
		return fmt.Errorf("%s queue %s: %w", pauseVerb(paused), queue, err)
	}
	return nil
}

// PauseTenant stops claims of a tenant's jobs in every queue and every
// process that shares the store, from the next claim on: other tenants are
// served as before (round-robin goes on without it), the tenant's running
// jobs finish normally, its enqueues still succeed, and its pending jobs
// keep their FIFO order; their positions say Paused. A tenant that has no
// jobs yet can be paused, and the pause applies to the jobs it gets later;
// it stays until ResumeTenant. Pausing a paused tenant changes nothing.
func (c *Client) PauseTenant(ctx context.Context, tenantID string) error {
	return c.setTenantPause(ctx, tenantID, true)
}

// ResumeTenant lets the tenant's jobs be claimed again, first job first,
// and wakes the workers of the queues where it has work. Resuming a tenant
// that is not paused changes nothing.
func (c *Client) ResumeTenant(ctx context.Context, tenantID string) error {
	if err := c.setTenantPause(ctx, tenantID, false); err != nil {
		return err
	}
	c.wake.call("")
	return nil
}

func (c *Client) setTenantPause(ctx context.Context, tenantID string, paused bool) error {
	if tenantID == "" || len(tenantID) > 200 {
		return fmt.Errorf("%w: tenant id must be 1-200 bytes", ErrInvalid)
	}
	if err := c.exec.TenantPauseSet(ctx, &driver.TenantPauseParams{TenantID: tenantID, Paused: paused}); err != nil {
		return fmt.Errorf("%s tenant %s: %w", pauseVerb(paused), tenantID, err)
	}
	return nil
}

// Pauses returns the queues and tenants paused now.
func (c *Client) Pauses(ctx context.Context) (*Pauses, error) {
	p, err := c.exec.PauseList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", err)
	}
	return p, nil
}

func pauseVerb(paused bool) string {
	if paused {
		return "pause"
	}
	return "resume"
}

// wakeHooks are the wake-ups of this process's claim loops, called with a
// queue's name when a client of the process resumes that queue or inserts
// a job into it (Enqueue, EnqueueTx, Retry...), and with "" (every queue)
// when it resumes a tenant. Other processes learn of these from the
// notification the driver sends, or at their next poll.
type wakeHooks struct {
	mu  sync.Mutex
	fns map[*func(queue string)]struct{}
}

// add registers fn and returns a function that removes it.
func (h *wakeHooks) add(fn func(queue string)) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns == nil {
		h.fns = make(map[*func(string)]struct{})
	}
	key := &fn
	h.fns[key] = struct{}{}
	return func() {
		h.mu.Lock()
		delete(h.fns, key)
		h.mu.Unlock()
	}
}

func (h *wakeHooks) call(queue string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for fn := range h.fns {
		(*fn)(queue)
	}
}

// wakeClaimers wakes the claim loops of queue, or of every queue ("");
// see wakeHooks.
func (w *Worker) wakeClaimers(queue string) {
	if queue != "" {
		w.wakeQueue(queue)
		return
	}
	for name := range w.wake {
		w.wakeQueue(name)
	}
}
