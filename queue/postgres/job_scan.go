package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// jobColumnNames are the docket_jobs columns scanJob reads, in its order.
var jobColumnNames = []string{
	"id", "queue", "kind", "tenant_id", "args", "state", "priority", "attempt", "max_attempts",
	"run_at", "unique_key", "retry_of", "fail_on_timeout", "stage", "progress", "progress_message",
	"error_message", "result", "lease_token", "lease_expires_at", "worker_id", "created_at",
	"started_at", "completed_at", "updated_at", "metadata", "partial_result", "cost",
	"parent_id",
}

// jobColumns lists the columns scanJob reads, plainly.
var jobColumns = jobCols("")

// jobCols lists the columns scanJob reads, each prefixed (e.g. "j.").
func jobCols(prefix string) string {
	cols := make([]string, len(jobColumnNames))
	for i, c := range jobColumnNames {
		cols[i] = prefix + c
	}
	return strings.Join(cols, ", ")
}

// scanJob scans the columns of jobColumns, after any leading
// destinations.
func scanJob(row pgx.Row, lead ...any) (*driver.Job, error) {
	return newJobScanner(lead...).scan(row)
}

// scanJobs collects rows of jobColumns.
func scanJobs(rows pgx.Rows) ([]*driver.Job, error) {
	defer rows.Close()
	var jobs []*driver.Job
	s := newJobScanner()
	for rows.Next() {
		j, err := s.scan(rows)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// jobScanner holds the destinations of one row of jobColumns, and the
// list of pointers to them that Scan takes. scanJobs reuses one for every
// row of a claim (up to a thousand jobs): building them per row cost a
// slice and a dozen small allocations per job, a fifth of what the worker
// allocated in the steady benchmark. Every Scan sets every destination
// (nil for NULL), and the values it stores are its own, so a row never
// sees the previous one's.
type jobScanner struct {
	j                              driver.Job
	state                          string
	uniqueKey                      *string
	retryOf, parentID              *int64
	args, result, metadata         []byte
	partial                        []byte
	leaseExp, started, completed   *time.Time
	priority, attempt, maxAttempts int32
	progress                       int16
	cost                           int32
	dest                           []any
}

func newJobScanner(lead ...any) *jobScanner {
	s := &jobScanner{}
	j := &s.j
	s.dest = make([]any, 0, len(lead)+len(jobColumnNames))
	s.dest = append(s.dest, lead...)
	s.dest = append(s.dest,
		&j.ID, &j.Queue, &j.Kind, &j.TenantID, &s.args, &s.state, &s.priority, &s.attempt, &s.maxAttempts,
		&j.RunAt, &s.uniqueKey, &s.retryOf, &j.FailOnTimeout, &j.Stage, &s.progress, &j.ProgressMessage,
		&j.ErrorMessage, &s.result, &j.LeaseToken, &s.leaseExp, &j.WorkerID, &j.CreatedAt,
		&s.started, &s.completed, &j.UpdatedAt, &s.metadata, &s.partial, &s.cost,
		&s.parentID)
	return s
}

// scan scans row into a new job.
func (s *jobScanner) scan(row pgx.Row) (*driver.Job, error) {
	if err := row.Scan(s.dest...); err != nil {
		return nil, err
	}
	j := new(driver.Job)
	*j = s.j
	if len(s.metadata) > 0 {
		if err := json.Unmarshal(s.metadata, &j.Metadata); err != nil {
			return nil, fmt.Errorf("job %d's metadata: %w", j.ID, err)
		}
	}
	j.State = driver.State(s.state)
	j.Args, j.Result, j.PartialResult = s.args, s.result, s.partial
	j.Priority, j.Attempt, j.MaxAttempts, j.Progress = int(s.priority), int(s.attempt), int(s.maxAttempts), int(s.progress)
	j.Cost = int(s.cost)
	j.UniqueKey = deref(s.uniqueKey)
	j.RetryOf, j.ParentID = deref(s.retryOf), deref(s.parentID)
	j.LeaseExpiresAt, j.StartedAt, j.CompletedAt = deref(s.leaseExp), deref(s.started), deref(s.completed)
	return j, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// micros converts a duration to whole microseconds, PostgreSQL's interval
// resolution: SQL multiplies it by interval '1 microsecond'.
func micros(d time.Duration) int64 { return d.Microseconds() }
