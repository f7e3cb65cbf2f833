package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// JobGet returns one job, or driver.ErrNotFound.
func (e *Executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	j, err := e.jobGet(ctx, id, "")
	if err != nil {
		return nil, fmt.Errorf("get job %d: %w", id, interpretError(err))
	}
	return j, nil
}

var jobGetSQL = `SELECT ` + jobColumns + ` FROM docket_jobs WHERE id = $1 AND ($2 = '' OR tenant_id = $2)`

// jobGet reads a job, of tenant when it is not empty.
func (e *Executor) jobGet(ctx context.Context, id int64, tenant string) (*driver.Job, error) {
	return scanJob(e.db.QueryRow(ctx, jobGetSQL, id, tenant))
}

// JobList returns jobs matching params, newest first.
func (e *Executor) JobList(ctx context.Context, params *driver.JobListParams) ([]*driver.Job, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if params.TenantID != "" {
		add("tenant_id = $?", params.TenantID)
	}
	if params.Queue != "" {
		add("queue = $?", params.Queue)
	}
	if params.Kind != "" {
		add("kind = $?", params.Kind)
	}
	if len(params.States) > 0 {
		states := make([]string, len(params.States))
		for i, s := range params.States {
			states[i] = string(s)
		}
		add("state = ANY($?::text[])", states)
	}
	if params.BeforeID > 0 {
		add("id < $?", params.BeforeID)
	}
	limit := params.Limit
	if limit <= 0 {
		limit = 100
	}
	sql := "SELECT " + jobColumns + " FROM docket_jobs"
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	sql += " ORDER BY id DESC LIMIT $" + strconv.Itoa(len(args))
	rows, err := e.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	return jobs, nil
}

// attemptsSQL reads a job's attempt records and, for a completed job, the
// attempt that completed it from the job's row (finishSQL writes no record
// for it). A record of it written before migration 013 is read instead.
const attemptsSQL = `
SELECT job_id, attempt, worker_id, started_at, finished_at, outcome, error
FROM (
    SELECT job_id, attempt, worker_id, started_at, finished_at, outcome, error, 0 AS last, id
    FROM docket_job_attempts WHERE job_id = $1
    UNION ALL
    SELECT j.id, j.attempt, j.worker_id, j.started_at, j.completed_at, 'completed', '', 1, 0
    FROM docket_jobs j
    WHERE j.id = $1 AND j.state = 'completed'
      AND NOT EXISTS (SELECT FROM docket_job_attempts a WHERE a.job_id = j.id AND a.outcome = 'completed')
) a
ORDER BY last, id`

// JobAttempts lists the finished attempts of a job, oldest first.
func (e *Executor) JobAttempts(ctx context.Context, id int64) ([]*driver.Attempt, error) {
	rows, err := e.db.Query(ctx, attemptsSQL, id)
	if err != nil {
		return nil, fmt.Errorf("attempts of job %d: %w", id, interpretError(err))
	}
	defer rows.Close()
	var out []*driver.Attempt
	for rows.Next() {
		var a driver.Attempt
		var attempt int32
		var started *time.Time
		var outcome string
		if err := rows.Scan(&a.JobID, &attempt, &a.WorkerID, &started, &a.FinishedAt, &outcome, &a.Error); err != nil {
			return nil, fmt.Errorf("attempts of job %d: %w", id, err)
		}
		a.Attempt, a.StartedAt, a.Outcome = int(attempt), deref(started), driver.Outcome(outcome)
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts of job %d: %w", id, interpretError(err))
	}
	return out, nil
}
