package queue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// Get returns a job, or ErrNotFound.
func (c *Client) Get(ctx context.Context, id int64) (*Job, error) {
	return c.exec.JobGet(ctx, id)
}

// List returns jobs matching params, newest first; nil params are the
// zero JobListParams (every job, the first 100).
func (c *Client) List(ctx context.Context, params *JobListParams) ([]*Job, error) {
	if params == nil {
		params = &JobListParams{}
	}
	jobs, err := c.exec.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// Periodic returns the store's records of the periodic tasks (the
// maintenance sweeps and the periodic jobs), by name.
func (c *Client) Periodic(ctx context.Context) ([]*PeriodicRecord, error) {
	recs, err := c.exec.PeriodicList(ctx)
	if err != nil {
		return nil, fmt.Errorf("periodic tasks: %w", err)
	}
	return recs, nil
}

// Attempts returns the finished attempts of a job, oldest first.
func (c *Client) Attempts(ctx context.Context, id int64) ([]*Attempt, error) {
	return c.exec.JobAttempts(ctx, id)
}

// Cancel cancels a job. A pending job never runs; a running one loses its
// lease and its handler's context is cancelled at the worker's next
// heartbeat. tenantID, when not empty, scopes the lookup.
func (c *Client) Cancel(ctx context.Context, id int64, tenantID string) (*Job, error) {
	job, err := c.exec.JobCancel(ctx, &driver.JobCancelParams{ID: id, TenantID: tenantID})
	if err != nil {
		return nil, err
	}
	c.bus.Publish(Event{Type: EventCancelled, Job: job})
	if job.ParentID != 0 {
		c.wake.call("") // a workflow step: its parent may be pending again
	}
	return job, nil
}

// Discard fails a scheduled, pending or running job at once (an admin's
// tool to unblock a tenant from a poisoned job).
func (c *Client) Discard(ctx context.Context, id int64, reason string) (*Job, error) {
	if reason == "" {
		reason = "discarded"
	}
	job, err := c.exec.JobCancel(ctx, &driver.JobCancelParams{ID: id, Discard: true, Reason: reason})
	if err != nil {
		return nil, err
	}
	c.bus.Publish(Event{Type: EventFailed, Job: job})
	if job.ParentID != 0 {
		c.wake.call("") // a workflow step: its parent may be pending again
	}
	return job, nil
}

// Retry enqueues a new job that retries a failed or cancelled one. The
// original stays as it was; the new job's RetryOf names it.
//
// A workflow parent (a job that spawned children, Task.Spawn) is re-opened
// instead, and returned with its own id: its failed and cancelled steps
// run again, its completed ones are kept, and it runs again once they have
// all finished (at once if none is left). See docs/library.md, Workflows.
func (c *Client) Retry(ctx context.Context, id int64, tenantID string) (*Job, error) {
	return c.retry(ctx, c.exec, false, id, tenantID)
}

func (c *Client) retry(ctx context.Context, exec driver.Executor, inTx bool, id int64, tenantID string) (*Job, error) {
	job, err := exec.JobRetry(ctx, &driver.JobRetryParams{ID: id, TenantID: tenantID})
	if err != nil {
		return nil, err
	}
	if job.ID == id {
		// A workflow parent re-opened: its steps, pending again, may be
		// in any queue. Nothing was inserted.
		c.wake.call("")
		return job, nil
	}
	c.inserted(inTx, job)
	return job, nil
}

// inserted tells this process of jobs inserted: it wakes the claim loops
// of their queues, and publishes EventInserted unless the jobs were
// inserted in a caller's transaction (inTx). Such a job exists only if that
// transaction commits, so the event is the caller's to publish after the
// commit (PublishInserted): published here it showed subscribers (the
// feed, the metrics) jobs whose transaction then rolled back. The claim
// loops are woken at once all the same: on SQLite their claim waits for
// the transaction (the store's one writer) and then finds the job;
// elsewhere the driver's notification after the commit wakes them again.
// The wake-up is direct, not through the bus: a subscriber's buffer drops
// what does not fit, and a batch or a burst of inserts larger than the
// worker's listener holds lost the wake-ups of its last queues, whose jobs
// then waited for a poll (TestClient_EnqueueManyBurstWakesEveryQueue).
func (c *Client) inserted(inTx bool, jobs ...*Job) {
	var woken []string // a batch's queues: few
	for _, job := range jobs {
		if !slices.Contains(woken, job.Queue) {
			woken = append(woken, job.Queue)
			c.wake.call(job.Queue)
		}
	}
	if !inTx {
		c.PublishInserted(jobs...)
	}
}

// PublishInserted publishes EventInserted for jobs inserted in a caller's
// transaction (EnqueueTx, EnqueueManyTx, RetryTx), which do not: call it
// after that transaction commits, with the jobs it inserted (not the job
// of a Duplicate result, which existed before).
func (c *Client) PublishInserted(jobs ...*Job) {
	for _, job := range jobs {
		c.bus.Publish(Event{Type: EventInserted, Job: job})
	}
}

// QueuePosition is where a waiting job stands.
type QueuePosition struct {
	// Ahead is the number of jobs of the same tenant and queue that will
	// start before this one.
	Ahead int
	// EstimatedStart is when the job should start, from recent throughput;
	// zero when unknown or paused.
	EstimatedStart time.Time
	// Paused: the job's queue or tenant is paused; it keeps its place and
	// starts only after a resume.
	Paused bool
}

// Position tells where a scheduled or pending job stands in its tenant's
// queue. A job in any other state gives ErrConflict.
func (c *Client) Position(ctx context.Context, id int64) (*QueuePosition, error) {
	return c.position(ctx, c.exec, id)
}

func (c *Client) position(ctx context.Context, exec driver.Executor, id int64) (*QueuePosition, error) {
	p, err := exec.JobPosition(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.Paused {
		return &QueuePosition{Ahead: p.Ahead, Paused: true}, nil
	}
	return &QueuePosition{Ahead: p.Ahead, EstimatedStart: estimateStart(p, time.Now())}, nil
}

// estimateStart assumes the tenant's slots turn over once per average job
// duration: the job starts after the rounds needed to clear those ahead,
// plus one round when every slot is busy now.
func estimateStart(p *driver.Position, now time.Time) time.Time {
	if p.AvgDuration <= 0 || p.Limit <= 0 {
		return time.Time{}
	}
	rounds := p.Ahead / p.Limit
	if p.Running >= p.Limit || p.Ahead%p.Limit > 0 {
		rounds++
	}
	return now.Add(time.Duration(rounds) * p.AvgDuration)
}

// SetTenantWeight sets a tenant's weight in the claim's fair shares, in
// every queue: with its jobs waiting, a tenant of weight w is given w
// times the cost (EnqueueParams.Cost) one of weight 1 is; 0 restores the
// default, 1. At most MaxLimit.
func (c *Client) SetTenantWeight(ctx context.Context, tenantID string, weight int) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant weight needs a tenant", ErrInvalid)
	}
	if err := driver.ValidateLimit("tenant weight", weight, 0); err != nil {
		return err
	}
	return c.exec.TenantWeightSet(ctx, &driver.TenantWeightParams{TenantID: tenantID, Weight: weight})
}

// SetTenantLimit sets how many jobs of a tenant may run at once in a queue
// (every queue when queue is empty); 0 restores the queue's default.
func (c *Client) SetTenantLimit(ctx context.Context, tenantID, queue string, limit int) error {
	if limit < 0 {
		return fmt.Errorf("%w: tenant limit %d is negative", ErrInvalid, limit)
	}
	if queue != "" {
		if err := ValidateQueueName(queue); err != nil {
			return err
		}
	}
	return c.exec.TenantLimitSet(ctx, &driver.TenantLimitParams{TenantID: tenantID, Queue: queue, MaxRunning: limit})
}

// SetQueueDefaultLimit sets the tenant limit of a queue for tenants without
// an override.
func (c *Client) SetQueueDefaultLimit(ctx context.Context, queue string, limit int) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	if limit < 1 {
		return fmt.Errorf("%w: default tenant limit %d must be at least 1", ErrInvalid, limit)
	}
	return c.exec.QueueConfigSet(ctx, &driver.QueueConfigParams{Queue: queue, DefaultTenantLimit: limit})
}

// Stats reports counts per state and store health for a queue.
func (c *Client) Stats(ctx context.Context, queue string) (*QueueStats, error) {
	return c.exec.QueueStats(ctx, queue)
}

// ListenChanges calls fn with a queue's name whenever a job of that queue
// is inserted or changes in another process (on PostgreSQL, through
// LISTEN/NOTIFY), until ctx ends. Hints carry no job data: re-read what you show. Changes made in
// this process arrive on the Bus instead. With a single-process driver
// there are no other processes, and it just waits for ctx.
func (c *Client) ListenChanges(ctx context.Context, fn func(queue string)) error {
	n := c.driver.Notifier()
	if n == nil {
		<-ctx.Done()
		return nil
	}
	return n.Listen(ctx, []string{driver.TopicChange, driver.TopicInsert}, func(_, queue string) { fn(queue) })
}
