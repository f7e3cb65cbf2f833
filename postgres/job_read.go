package postgres

import (
	"context"
	"fmt"
	"slices"
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

// JobList returns jobs matching params, newest first; see jobListSQL.
func (e *Executor) JobList(ctx context.Context, params *driver.JobListParams) ([]*driver.Job, error) {
	sql, args := jobListSQL(params)
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

// jobListSQL is JobList's statement and its arguments. Without a tenant it
// walks the primary key backwards. A tenant's jobs are two parts
// (migration 014): those not running from docket_jobs_tenant, which leaves
// running jobs out, and the running ones, all of the tenant's read from
// docket_jobs_lease (as many as the workers have slots) and sorted, kept
// from an ordered scan of the primary key by the OFFSET 0 fence: a tenant
// with nothing running would have it walk every job. A filter on states
// leaves out the part it cannot match.
func jobListSQL(params *driver.JobListParams) (string, []any) {
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
	idle, running := true, true
	if len(params.States) > 0 {
		states := make([]string, len(params.States))
		idle, running = false, false
		for i, s := range params.States {
			states[i] = string(s)
			idle = idle || s != driver.StateRunning
			running = running || s == driver.StateRunning
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
	args = append(args, limit)
	tail := " ORDER BY id DESC LIMIT $" + strconv.Itoa(len(args))
	from := func(extra ...string) string {
		sql := "SELECT " + jobColumns + " FROM docket_jobs"
		if conds := slices.Concat(where, extra); len(conds) > 0 {
			sql += " WHERE " + strings.Join(conds, " AND ")
		}
		return sql
	}
	if params.TenantID == "" {
		return from() + tail, args
	}
	var parts []string
	if idle {
		parts = append(parts, "("+from("state <> 'running'")+tail+")")
	}
	if running {
		parts = append(parts, "(SELECT * FROM ("+from("state = 'running'")+" OFFSET 0) r"+tail+")")
	}
	if len(parts) == 1 {
		return parts[0], args
	}
	return "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ") j" + tail, args
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
