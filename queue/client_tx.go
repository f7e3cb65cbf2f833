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
	jobs, err := exec.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}
