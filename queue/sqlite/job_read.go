package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/docketq/docket/queue/driver"
)

const getJobSQL = `SELECT ` + jobColumns + ` FROM docket_jobs WHERE id = ?`

// getJob reads a job; a job of another tenant than tenant (when set) is
// not found.
func getJob(ctx context.Context, q querier, id int64, tenant string) (*driver.Job, error) {
	j, err := scanJob(q.QueryRowContext(ctx, getJobSQL, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && tenant != "" && j.TenantID != tenant) {
		return nil, fmt.Errorf("%w: job %d", driver.ErrNotFound, id)
	}
	return j, err
}

// JobGet returns one job, or ErrNotFound.
func (e *executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	var j *driver.Job
	err := e.readOne(func(q querier) (err error) {
		j, err = getJob(ctx, q, id, "")
		return err
	})
	return j, err
}

// JobList returns jobs matching params, newest first.
func (e *executor) JobList(ctx context.Context, p *driver.JobListParams) ([]*driver.Job, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if p.TenantID != "" {
		add("tenant_id = ?", p.TenantID)
	}
	if p.Queue != "" {
		add("queue = ?", p.Queue)
	}
	if p.Kind != "" {
		add("kind = ?", p.Kind)
	}
	if p.BeforeID > 0 {
		add("id < ?", p.BeforeID)
	}
	if len(p.States) > 0 {
		marks := make([]string, len(p.States))
		for i, s := range p.States {
			if !s.Valid() {
				return nil, fmt.Errorf("list jobs: %w: state %q", driver.ErrInvalid, s)
			}
			marks[i] = "?"
			args = append(args, string(s))
		}
		where = append(where, "state IN ("+strings.Join(marks, ", ")+")")
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	query := `SELECT ` + jobColumns + ` FROM docket_jobs`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var jobs []*driver.Job
	err := e.readOne(func(q querier) (err error) {
		jobs, err = scanJobs(q.QueryContext(ctx, query, args...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

const attemptsSQL = `
SELECT job_id, attempt, worker_id, started_at, finished_at, outcome, error
FROM docket_job_attempts WHERE job_id = ? ORDER BY id`

// JobAttempts lists the finished attempts of a job, oldest first.
func (e *executor) JobAttempts(ctx context.Context, id int64) ([]*driver.Attempt, error) {
	var out []*driver.Attempt
	err := e.readOne(func(q querier) error {
		rows, err := q.QueryContext(ctx, attemptsSQL, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a driver.Attempt
			var started, finished int64
			if err := rows.Scan(&a.JobID, &a.Attempt, &a.WorkerID, &started, &finished, &a.Outcome, &a.Error); err != nil {
				return err
			}
			a.StartedAt, a.FinishedAt = fromMicros(started), fromMicros(finished)
			out = append(out, &a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("job %d attempts: %w", id, err)
	}
	return out, nil
}
