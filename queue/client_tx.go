package queue

import (
	"context"
	"fmt"
)

// ListTx returns jobs matching params as the caller's transaction (pgx.Tx
// for PostgreSQL, *sql.Tx for SQLite) sees them, newest first: jobs it
// enqueued before committing included, so a test can check what a
// transaction enqueued before, or instead of, committing it.
func (c *Client) ListTx(ctx context.Context, tx any, params *JobListParams) ([]*Job, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = &JobListParams{}
	}
	jobs, err := exec.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// GetTx returns a job as the caller's transaction sees it, or ErrNotFound.
// Inside a store's tenant transaction on PostgreSQL, row-level security
// hides every other tenant's job.
func (c *Client) GetTx(ctx context.Context, tx any, id int64) (*Job, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return exec.JobGet(ctx, id)
}

// RetryTx is Retry inside the caller's transaction: the new job exists if
// and only if the transaction commits, so a caller can point its own rows
// at the new job in the same commit. As EnqueueTx, it publishes no
// EventInserted: call PublishInserted after the commit.
func (c *Client) RetryTx(ctx context.Context, tx any, id int64, tenantID string) (*Job, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return c.retry(ctx, exec, true, id, tenantID)
}

// PositionTx is Position as the caller's transaction sees it: a job it
// enqueued and has not committed yet has its place already.
func (c *Client) PositionTx(ctx context.Context, tx any, id int64) (*QueuePosition, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return c.position(ctx, exec, id)
}
