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
	"started_at", "completed_at", "updated_at", "metadata", "partial_result",
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
	var (
		j                              driver.Job
		state                          string
		uniqueKey                      *string
		retryOf                        *int64
		args, result, metadata         []byte
		partial                        []byte
		leaseExp, started, completed   *time.Time
		priority, attempt, maxAttempts int32
		progress                       int16
	)
	dest := make([]any, 0, len(lead)+len(jobColumnNames))
	dest = append(dest, lead...)
	dest = append(dest,
		&j.ID, &j.Queue, &j.Kind, &j.TenantID, &args, &state, &priority, &attempt, &maxAttempts,
		&j.RunAt, &uniqueKey, &retryOf, &j.FailOnTimeout, &j.Stage, &progress, &j.ProgressMessage,
		&j.ErrorMessage, &result, &j.LeaseToken, &leaseExp, &j.WorkerID, &j.CreatedAt,
		&started, &completed, &j.UpdatedAt, &metadata, &partial)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if len(metadata) > 0 {
		if err := json.Unmarshal(metadata, &j.Metadata); err != nil {
			return nil, fmt.Errorf("job %d's metadata: %w", j.ID, err)
		}
	}
	j.State = driver.State(state)
	j.Args, j.Result, j.PartialResult = args, result, partial
	j.Priority, j.Attempt, j.MaxAttempts, j.Progress = int(priority), int(attempt), int(maxAttempts), int(progress)
	j.UniqueKey = deref(uniqueKey)
	j.RetryOf = deref(retryOf)
	j.LeaseExpiresAt, j.StartedAt, j.CompletedAt = deref(leaseExp), deref(started), deref(completed)
	return &j, nil
}

// scanJobs collects rows of jobColumns.
func scanJobs(rows pgx.Rows) ([]*driver.Job, error) {
	defer rows.Close()
	var jobs []*driver.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
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
