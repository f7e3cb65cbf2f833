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
// walks the primary key backwards. A tenant's jobs are read in up to three
// parts, each from an index that holds them newest last, and merged:
//
//   - scheduled and finished jobs from docket_jobs_tenant, which leaves
//     pending and running jobs out (migrations 014 and 017: two index
//     entries fewer per job);
//   - pending jobs from the fetch index, whose order within one queue,
//     tenant and priority is the id's: a recursive walk finds the
//     priorities the tenant has pending in each of its queues (the queues
//     of its claim rows, which every pending job has), one index probe
//     each, and each (queue, priority) is read backwards, at most limit
//     jobs. The cost is in the tenant's queues and priorities, not in its
//     backlog;
//   - running jobs, all of the tenant's read from docket_jobs_lease (as
//     many as the workers have slots) and sorted, kept from an ordered
//     scan of the primary key by the OFFSET 0 fence: a tenant with nothing
//     running would have it walk every job.
//
// A filter on states leaves out the parts it cannot match.
func jobListSQL(params *driver.JobListParams) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	add := func(cond string, v any) string {
		n := arg(v)
		where = append(where, strings.ReplaceAll(cond, "$?", n))
		return n
	}
	var tenant, queue string
	if params.TenantID != "" {
		tenant = add("tenant_id = $?", params.TenantID)
	}
	if params.Queue != "" {
		queue = add("queue = $?", params.Queue)
	}
	if params.Kind != "" {
		add("kind = $?", params.Kind)
	}
	settled, pending, running := true, true, true
	if len(params.States) > 0 {
		states := make([]string, len(params.States))
		settled, pending, running = false, false, false
		for i, s := range params.States {
			states[i] = string(s)
			settled = settled || s != driver.StatePending && s != driver.StateRunning
			pending = pending || s == driver.StatePending
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
	tail := " ORDER BY id DESC LIMIT " + arg(limit)
	from := func(extra ...string) string {
		sql := "SELECT " + jobColumns + " FROM docket_jobs"
		if conds := slices.Concat(where, extra); len(conds) > 0 {
			sql += " WHERE " + strings.Join(conds, " AND ")
		}
		return sql
	}
	if tenant == "" {
		return from() + tail, args
	}
	var parts []string
	if settled {
		parts = append(parts, "("+from("state NOT IN ('pending', 'running')")+tail+")")
	}
	if pending {
		jobs := from("state = 'pending'", "queue = p.queue", "priority = p.priority") + tail
		parts = append(parts, "("+pendingListSQL(tenant, queue, jobs)+tail+")")
	}
	if running {
		parts = append(parts, "(SELECT * FROM ("+from("state = 'running'")+" OFFSET 0) r"+tail+")")
	}
	if len(parts) == 1 {
		return parts[0], args
	}
	return "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ") j" + tail, args
}

// pendingListSQL reads the pending jobs of tenant (a placeholder), of
// queue when it is not empty, newest first, from the fetch index
// (queue, tenant_id, priority DESC, id): prios walks up the priorities the
// tenant has pending in each queue, one backward probe each (backwards,
// from the newest jobs: the oldest end is where claims leave dead
// entries), and jobs, a statement on docket_jobs whose conditions name
// p.queue and p.priority, reads each of them.
func pendingListSQL(tenant, queue, jobs string) string {
	probe := func(above string) string {
		return `(SELECT x.priority FROM docket_jobs x
        WHERE x.state = 'pending' AND x.queue = q.queue AND x.tenant_id = ` + tenant + above + `
        ORDER BY x.priority, x.id DESC LIMIT 1)`
	}
	queues := "SELECT t.queue FROM docket_tenant_queues t WHERE t.tenant_id = " + tenant
	if queue != "" {
		queues += " AND t.queue = " + queue
	}
	return `WITH RECURSIVE prios AS (
    SELECT q.queue, ` + probe("") + ` AS priority
    FROM (` + queues + `) q
    UNION ALL
    SELECT q.queue, ` + probe(" AND x.priority > q.priority") + `
    FROM prios q WHERE q.priority IS NOT NULL
)
SELECT j.* FROM prios p CROSS JOIN LATERAL (` + jobs + `) j
WHERE p.priority IS NOT NULL`
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
