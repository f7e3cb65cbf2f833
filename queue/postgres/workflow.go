package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// Workflows: a running job spawns children (JobSpawn) and may wait for
// them (JobFinish's waiting outcome). docket_jobs.children_open counts a
// parent's unfinished children; the triggers of repeatable/workflow.sql
// count a child's end down and wake its parent, whatever statement ends
// it (a finish, a cancel, a rescue).

// spawnLockSQL checks the parent's lease and locks its row to the commit:
// the parent's own finish, cancel or rescue waits for the spawn, and a
// spawn after them finds the lease gone.
const spawnLockSQL = `SELECT tenant_id FROM docket_jobs
WHERE id = $1 AND attempt = $2 AND lease_token = $3 AND $3 <> 0
FOR NO KEY UPDATE`

// spawnAdoptSQL makes the jobs $2 children of $1 and counts them open.
// They were inserted by this transaction, so no claim has seen them.
const spawnAdoptSQL = `
WITH adopted AS (
    UPDATE docket_jobs c SET parent_id = $1 WHERE c.id = ANY($2::bigint[]) RETURNING c.id
)
UPDATE docket_jobs p SET children_open = p.children_open + (SELECT count(*) FROM adopted)
WHERE p.id = $1`

// JobSpawn inserts children of a running job; see driver.Executor.
func (e *Executor) JobSpawn(ctx context.Context, params *driver.JobSpawnParams) ([]driver.InsertResult, error) {
	l := params.Lease
	var results []driver.InsertResult
	err := e.retryDeadlock(ctx, func() error {
		return e.inTx(ctx, func(x *Executor) error {
			var tenant string
			if err := x.db.QueryRow(ctx, spawnLockSQL, l.JobID, l.Attempt, l.Token).Scan(&tenant); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("job %d attempt %d: %w", l.JobID, l.Attempt, driver.ErrLeaseLost)
				}
				return err
			}
			children := make([]*driver.JobInsertParams, len(params.Children))
			for i, c := range params.Children {
				cp := *c
				cp.TenantID = tenant
				children[i] = &cp
			}
			var err error
			if results, err = x.JobInsertMany(ctx, children); err != nil {
				return err
			}
			var fresh []int64
			for _, r := range results {
				if !r.Duplicate {
					r.Job.ParentID = l.JobID
					fresh = append(fresh, r.Job.ID)
				}
			}
			_, err = x.db.Exec(ctx, spawnAdoptSQL, l.JobID, fresh)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("spawn children of job %d: %w", l.JobID, interpretError(err))
	}
	return results, nil
}

var childrenSQL = `SELECT ` + jobColumns + ` FROM docket_jobs WHERE parent_id = $1 ORDER BY id`

// JobChildren returns the children of a job in id order.
func (e *Executor) JobChildren(ctx context.Context, id int64) ([]*driver.Job, error) {
	rows, err := e.db.Query(ctx, childrenSQL, id)
	if err != nil {
		return nil, fmt.Errorf("children of job %d: %w", id, interpretError(err))
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("children of job %d: %w", id, interpretError(err))
	}
	return jobs, nil
}

// openChildrenSQL locks the unfinished children of $1, in id order: a
// child's finish that holds one is waited for (and then counted as it
// left it), and one that comes later waits for this transaction.
const openChildrenSQL = `SELECT id FROM docket_jobs
WHERE parent_id = $1 AND state NOT IN ('completed', 'failed', 'cancelled')
ORDER BY id FOR UPDATE`

// cancelTargetSQL reads the state of the job a cancel names ($1, of
// tenant $2 unless empty), before its children are touched.
const cancelTargetSQL = `SELECT state FROM docket_jobs WHERE id = $1 AND ($2 = '' OR tenant_id = $2)`

// JobCancel cancels a job that is not finished, and its unfinished
// children; see driver.Executor. It checks the job first (no such job, or
// finished: nothing is cancelled), then cancels the children, each locked
// before any is cancelled, then the parent (a child's end locks the
// child, then its parent: the same order), then the children its handler
// spawned while this ran (none can come after: the parent's lease is
// gone).
func (e *Executor) JobCancel(ctx context.Context, params *driver.JobCancelParams) (*driver.Job, error) {
	var job *driver.Job
	err := e.retryDeadlock(ctx, func() error {
		return e.inTx(ctx, func(x *Executor) error {
			var state driver.State
			if err := x.db.QueryRow(ctx, cancelTargetSQL, params.ID, params.TenantID).Scan(&state); err != nil {
				return err
			}
			if state.Finished() {
				return fmt.Errorf("%w: it is %s", driver.ErrConflict, state)
			}
			if err := x.cancelChildren(ctx, params); err != nil {
				return err
			}
			var err error
			if job, err = x.cancelOne(ctx, params); err != nil {
				return err
			}
			return x.cancelChildren(ctx, params)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cancel job %d: %w", params.ID, interpretError(err))
	}
	return job, nil
}

// cancelChildren cancels the unfinished children of params.ID, and
// theirs, with params' reason.
func (e *Executor) cancelChildren(ctx context.Context, params *driver.JobCancelParams) error {
	rows, err := e.db.Query(ctx, openChildrenSQL, params.ID)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, id := range ids {
		child := &driver.JobCancelParams{ID: id, Discard: params.Discard, Reason: params.Reason}
		if err := e.cancelChildren(ctx, child); err != nil {
			return err
		}
		if _, err := e.cancelOne(ctx, child); err != nil && !errors.Is(err, driver.ErrConflict) {
			return err
		}
	}
	return nil
}

// cancelOne cancels one job (cancelSQL).
func (e *Executor) cancelOne(ctx context.Context, params *driver.JobCancelParams) (*driver.Job, error) {
	var changed bool
	j, err := scanJob(e.db.QueryRow(ctx, cancelSQL, params.ID, params.TenantID, params.Discard, params.Reason), &changed)
	if err != nil {
		return nil, err
	}
	if !changed {
		return nil, fmt.Errorf("%w: it is %s", driver.ErrConflict, j.State)
	}
	return j, nil
}

// childrenStatesSQL locks the children of $1 in id order and reads their
// states, and whether each has children of its own.
const childrenStatesSQL = `SELECT c.id, c.state, EXISTS (SELECT FROM docket_jobs g WHERE g.parent_id = c.id)
FROM docket_jobs c WHERE c.parent_id = $1 ORDER BY c.id FOR UPDATE OF c`

// requeueSQL makes a failed or cancelled job $1 run again, its attempts
// reset, pending or (with $2 > 0 children open) waiting. A job whose
// cancelled attempt still holds its slot keeps its attempt number and has
// its budget raised instead: a later attempt of the same number would
// collide with the hold's key (docket_slot_holds: job, attempt).
var requeueSQL = `UPDATE docket_jobs j SET
    state = CASE WHEN $2 > 0 THEN 'waiting' ELSE 'pending' END,
    attempt = CASE WHEN h.held THEN j.attempt ELSE 0 END,
    max_attempts = CASE WHEN h.held THEN j.max_attempts + j.attempt ELSE j.max_attempts END,
    children_open = $2, error_message = '', completed_at = NULL,
    run_at = clock_timestamp(), updated_at = clock_timestamp()
FROM (SELECT EXISTS (SELECT FROM docket_slot_holds WHERE job_id = $1) AS held) h
WHERE j.id = $1 AND j.state IN ('failed', 'cancelled')
RETURNING ` + jobCols("j.")

// wakeSQL makes the tenants ($1 queues, $2 tenants) claimable: jobs of
// theirs went back to pending.
var wakeSQL = `WITH moved AS (SELECT * FROM unnest($1::text[], $2::text[]) AS m(queue, tenant_id)), ` +
	wakeTenantsSQL("moved") + ` SELECT count(*) FROM moved`

// reopen re-opens the failed or cancelled workflow parent id (see
// driver.Executor.JobRetry), children first, and returns it.
func (e *Executor) reopen(ctx context.Context, id int64) (*driver.Job, error) {
	rows, err := e.db.Query(ctx, childrenStatesSQL, id)
	if err != nil {
		return nil, err
	}
	type child struct {
		id      int64
		state   driver.State
		parents bool
	}
	kids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (child, error) {
		var c child
		err := r.Scan(&c.id, &c.state, &c.parents)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	open := 0
	var woken []*driver.Job
	for _, c := range kids {
		switch {
		case c.state == driver.StateFailed || c.state == driver.StateCancelled:
			var j *driver.Job
			if c.parents {
				j, err = e.reopen(ctx, c.id)
			} else {
				j, err = scanJob(e.db.QueryRow(ctx, requeueSQL, c.id, 0))
			}
			if err != nil {
				return nil, err
			}
			woken = append(woken, j)
			open++
		case !c.state.Finished():
			open++
		}
	}
	j, err := scanJob(e.db.QueryRow(ctx, requeueSQL, id, open))
	if err != nil {
		return nil, err
	}
	var queues, tenants []string
	for _, w := range append(woken, j) {
		if w.State == driver.StatePending {
			queues, tenants = append(queues, w.Queue), append(tenants, w.TenantID)
		}
	}
	if len(queues) > 0 {
		if _, err := e.db.Exec(ctx, wakeSQL, queues, tenants); err != nil {
			return nil, err
		}
		if err := e.notify(ctx, queueNotes(driver.TopicInsert, queues...)...); err != nil {
			return nil, err
		}
	}
	return j, nil
}
