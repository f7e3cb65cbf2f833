package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// Workflows: a running job spawns children (JobSpawn) and may wait for
// them (JobFinish's waiting outcome). docket_jobs.children_open counts a
// parent's unfinished children; the triggers of repeatable/workflow.sql
// count a child's end down and wake its parent, whatever statement ends
// it (a finish, a cancel, a rescue).

const spawnParentSQL = `SELECT tenant_id FROM docket_jobs WHERE ` + leaseHeld

const adoptSQL = `UPDATE docket_jobs SET parent_id = ?2 WHERE id = ?1`

const countOpenSQL = `UPDATE docket_jobs SET children_open = children_open + ?2 WHERE id = ?1`

// JobSpawn inserts children of a running job; see driver.Executor.
func (e *executor) JobSpawn(ctx context.Context, p *driver.JobSpawnParams) ([]driver.InsertResult, error) {
	l := p.Lease
	results := make([]driver.InsertResult, len(p.Children))
	err := e.write(ctx, func(t *txn) error {
		var tenant string
		err := t.queryRow(ctx, spawnParentSQL, l.JobID, l.Attempt, l.Token).Scan(&tenant)
		if errors.Is(err, sql.ErrNoRows) {
			return leaseLost(l)
		} else if err != nil {
			return err
		}
		work := make(map[slot]bool)
		fresh := 0
		for i, c := range p.Children {
			cp := *c
			cp.TenantID = tenant
			res, err := t.insertJob(ctx, &cp)
			if err != nil {
				return fmt.Errorf("child %d of %d: %w", i+1, len(p.Children), err)
			}
			if !res.Duplicate {
				if _, err := t.exec(ctx, adoptSQL, res.Job.ID, l.JobID); err != nil {
					return err
				}
				res.Job.ParentID = l.JobID
				fresh++
				if res.Job.State == driver.StatePending {
					work[slot{res.Job.Queue, tenant}] = true
				}
			}
			results[i] = res
		}
		if _, err := t.exec(ctx, countOpenSQL, l.JobID, fresh); err != nil {
			return err
		}
		return t.markWork(ctx, work)
	})
	if err != nil {
		return nil, fmt.Errorf("spawn children of job %d: %w", l.JobID, err)
	}
	return results, nil
}

const childrenSQL = `SELECT ` + jobColumns + ` FROM docket_jobs WHERE parent_id = ? ORDER BY id`

// JobChildren returns the children of a job in id order.
func (e *executor) JobChildren(ctx context.Context, id int64) ([]*driver.Job, error) {
	var jobs []*driver.Job
	err := e.readOne(func(q querier) (err error) {
		jobs, err = scanJobs(q.QueryContext(ctx, childrenSQL, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("children of job %d: %w", id, err)
	}
	return jobs, nil
}

// children reads the children of a job in the transaction.
func (t *txn) children(ctx context.Context, id int64) ([]*driver.Job, error) {
	return scanJobs(t.query(ctx, childrenSQL, id))
}

// cancelChildren cancels the unfinished children of job id, and theirs.
func (t *txn) cancelChildren(ctx context.Context, id int64, state driver.State, msg string) error {
	kids, err := t.children(ctx, id)
	if err != nil {
		return err
	}
	for _, c := range kids {
		if c.State.Finished() {
			continue
		}
		if _, err := t.cancel(ctx, c, state, msg); err != nil {
			return err
		}
	}
	return nil
}

// requeueSQL makes a failed or cancelled job run again (as on PostgreSQL,
// a job whose cancelled attempt still holds its slot keeps its attempt
// number, its budget raised instead).
const requeueSQL = `UPDATE docket_jobs SET
	state = CASE WHEN ?2 > 0 THEN 'waiting' ELSE 'pending' END,
	attempt = CASE WHEN EXISTS (SELECT 1 FROM docket_slot_holds WHERE job_id = ?1) THEN attempt ELSE 0 END,
	max_attempts = CASE WHEN EXISTS (SELECT 1 FROM docket_slot_holds WHERE job_id = ?1)
		THEN max_attempts + attempt ELSE max_attempts END,
	children_open = ?2, error_message = '', completed_at = NULL, run_at = ?3, updated_at = ?3
WHERE id = ?1
RETURNING ` + jobColumns

// reopen re-opens the failed or cancelled workflow parent j (see
// driver.Executor.JobRetry), children first, and returns it.
func (t *txn) reopen(ctx context.Context, j *driver.Job, work map[slot]bool) (*driver.Job, error) {
	kids, err := t.children(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	open := 0
	for _, c := range kids {
		switch {
		case c.State == driver.StateFailed || c.State == driver.StateCancelled:
			grandkids, err := t.children(ctx, c.ID)
			if err != nil {
				return nil, err
			}
			if len(grandkids) > 0 {
				_, err = t.reopen(ctx, c, work)
			} else {
				_, err = t.requeue(ctx, c.ID, 0, work)
			}
			if err != nil {
				return nil, err
			}
			open++
		case !c.State.Finished():
			open++
		}
	}
	return t.requeue(ctx, j.ID, open, work)
}

// requeue makes the failed or cancelled job id run again, its attempts
// reset: waiting for open children, or pending (its tenant added to work).
func (t *txn) requeue(ctx context.Context, id int64, open int, work map[slot]bool) (*driver.Job, error) {
	j, err := scanJob(t.queryRow(ctx, requeueSQL, id, open, t.now))
	if err != nil {
		return nil, err
	}
	if j.State == driver.StatePending {
		work[slot{j.Queue, j.TenantID}] = true
	}
	return j, nil
}
