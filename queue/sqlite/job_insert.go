package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// JobInsertMany inserts jobs in one transaction. SQLite has one writer, so
// the lookup of an existing unique key cannot race with another insert.
func (e *executor) JobInsertMany(ctx context.Context, params []*driver.JobInsertParams) ([]driver.InsertResult, error) {
	if len(params) == 0 {
		return []driver.InsertResult{}, nil
	}
	results := make([]driver.InsertResult, len(params))
	err := e.write(ctx, func(t *txn) error {
		work := make(map[slot]bool)
		for i, p := range params {
			res, err := t.insertJob(ctx, p)
			if err != nil {
				return fmt.Errorf("job %d of %d: %w", i+1, len(params), err)
			}
			results[i] = res
			if !res.Duplicate && res.Job.State == driver.StatePending {
				work[slot{res.Job.Queue, res.Job.TenantID}] = true
			}
		}
		return t.markWork(ctx, work)
	})
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", err)
	}
	return results, nil
}

const insertJobSQL = `
INSERT INTO docket_jobs (queue, kind, tenant_id, args, state, priority, max_attempts, run_at,
	unique_key, retry_of, fail_on_timeout, created_at, updated_at, metadata, cost)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13, ?14)
ON CONFLICT DO NOTHING
RETURNING ` + jobColumns

const getUniqueSQL = `SELECT ` + jobColumns + ` FROM docket_jobs WHERE tenant_id = ? AND unique_key = ?`

func (t *txn) insertJob(ctx context.Context, p *driver.JobInsertParams) (driver.InsertResult, error) {
	if err := driver.ValidateQueueName(p.Queue); err != nil {
		return driver.InsertResult{}, err
	}
	if p.Kind == "" || p.TenantID == "" {
		return driver.InsertResult{}, fmt.Errorf("%w: kind and tenant are required", driver.ErrInvalid)
	}
	runAt, state := t.now, driver.StatePending
	if !p.RunAt.IsZero() {
		runAt = toMicros(p.RunAt)
		if runAt > t.now {
			state = driver.StateScheduled
		}
	}
	args := p.Args
	if args == nil {
		args = []byte("{}")
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = driver.DefaultMaxAttempts
	}
	var metadata sql.NullString
	if len(p.Metadata) > 0 {
		b, err := json.Marshal(p.Metadata)
		if err != nil {
			return driver.InsertResult{}, fmt.Errorf("job metadata: %w", err)
		}
		metadata = sql.NullString{String: string(b), Valid: true}
	}
	j, err := scanJob(t.queryRow(ctx, insertJobSQL, p.Queue, p.Kind, p.TenantID, string(args), state,
		p.Priority, maxAttempts, runAt, nullString(p.UniqueKey), nullInt(p.RetryOf), p.FailOnTimeout, t.now, metadata, max(p.Cost, 1)))
	if errors.Is(err, sql.ErrNoRows) && p.UniqueKey != "" {
		// The only conflict an insert can meet: the tenant's unique key.
		j, err = scanJob(t.queryRow(ctx, getUniqueSQL, p.TenantID, p.UniqueKey))
		return driver.InsertResult{Job: j, Duplicate: true}, err
	}
	return driver.InsertResult{Job: j}, err
}

// slot names a tenant in a queue: the unit of concurrency limits.
type slot struct {
	queue, tenant string
}

// limitSQL is a tenant's limit in a queue: its override for the queue, its
// override for every queue, the queue's default, or 1.
func limitSQL(tenant, queue string) string {
	return `COALESCE(
	(SELECT l.max_running FROM docket_tenant_limits l WHERE l.tenant_id = ` + tenant + ` AND l.queue = ` + queue + `),
	(SELECT l.max_running FROM docket_tenant_limits l WHERE l.tenant_id = ` + tenant + ` AND l.queue = ''),
	(SELECT q.default_tenant_limit FROM docket_queues q WHERE q.queue = ` + queue + `),
	1)`
}

var markWorkSQL = `
INSERT INTO docket_tenant_queues (queue, tenant_id, max_running, has_work)
VALUES (?1, ?2, ` + limitSQL("?2", "?1") + `, 1)
ON CONFLICT (queue, tenant_id) DO UPDATE SET has_work = 1 WHERE has_work = 0`

// markWork makes tenants claimable in their queue: they have pending jobs.
func (t *txn) markWork(ctx context.Context, slots map[slot]bool) error {
	for s := range slots {
		if _, err := t.exec(ctx, markWorkSQL, s.queue, s.tenant); err != nil {
			return fmt.Errorf("mark tenant %s claimable: %w", s.tenant, err)
		}
	}
	return nil
}

const retryJobSQL = `
INSERT INTO docket_jobs (queue, kind, tenant_id, args, state, priority, max_attempts, run_at,
	retry_of, fail_on_timeout, created_at, updated_at, metadata, cost)
SELECT queue, kind, tenant_id, args, 'pending', priority, max_attempts, ?2,
	id, fail_on_timeout, ?2, ?2, metadata, cost
FROM docket_jobs WHERE id = ?1
RETURNING ` + jobColumns

// JobRetry inserts a pending copy of a failed or cancelled job, or
// re-opens a workflow parent (reopen).
func (e *executor) JobRetry(ctx context.Context, p *driver.JobRetryParams) (*driver.Job, error) {
	var job *driver.Job
	err := e.write(ctx, func(t *txn) error {
		orig, err := getJob(ctx, t.tx, p.ID, p.TenantID)
		if err != nil {
			return err
		}
		if orig.State != driver.StateFailed && orig.State != driver.StateCancelled {
			return fmt.Errorf("%w: job %d is %s, not failed or cancelled", driver.ErrConflict, p.ID, orig.State)
		}
		kids, err := t.children(ctx, orig.ID)
		if err != nil {
			return err
		}
		if len(kids) > 0 {
			work := make(map[slot]bool)
			if job, err = t.reopen(ctx, orig, work); err != nil {
				return err
			}
			return t.markWork(ctx, work)
		}
		if job, err = scanJob(t.queryRow(ctx, retryJobSQL, p.ID, t.now)); err != nil {
			return err
		}
		return t.markWork(ctx, map[slot]bool{{job.Queue, job.TenantID}: true})
	})
	if err != nil {
		return nil, fmt.Errorf("retry job %d: %w", p.ID, err)
	}
	return job, nil
}
