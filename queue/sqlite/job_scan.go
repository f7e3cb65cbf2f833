package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// jobColumns are the columns scanJob reads, in its order.
const jobColumns = `id, queue, kind, tenant_id, args, state, priority, attempt, max_attempts,
	run_at, unique_key, retry_of, fail_on_timeout, stage, progress, progress_message,
	error_message, result, lease_token, lease_expires_at, worker_id,
	created_at, started_at, completed_at, updated_at, metadata, partial_result, cost, parent_id`

type scanner interface {
	Scan(dest ...any) error
}

func scanJob(s scanner) (*driver.Job, error) {
	var (
		j                                     driver.Job
		args, result, partial                 []byte
		state                                 string
		uniqueKey, metadata                   sql.NullString
		retryOf, leaseExp, started, completed sql.NullInt64
		parentID                              sql.NullInt64
		runAt, created, updated               int64
	)
	err := s.Scan(&j.ID, &j.Queue, &j.Kind, &j.TenantID, &args, &state, &j.Priority, &j.Attempt, &j.MaxAttempts,
		&runAt, &uniqueKey, &retryOf, &j.FailOnTimeout, &j.Stage, &j.Progress, &j.ProgressMessage,
		&j.ErrorMessage, &result, &j.LeaseToken, &leaseExp, &j.WorkerID,
		&created, &started, &completed, &updated, &metadata, &partial, &j.Cost, &parentID)
	if err != nil {
		return nil, err
	}
	if metadata.Valid {
		if err := json.Unmarshal([]byte(metadata.String), &j.Metadata); err != nil {
			return nil, fmt.Errorf("job %d's metadata: %w", j.ID, err)
		}
	}
	j.Args = json.RawMessage(args)
	if result != nil {
		j.Result = json.RawMessage(result)
	}
	if partial != nil {
		j.PartialResult = json.RawMessage(partial)
	}
	j.State = driver.State(state)
	j.UniqueKey = uniqueKey.String
	j.RetryOf, j.ParentID = retryOf.Int64, parentID.Int64
	j.RunAt, j.CreatedAt, j.UpdatedAt = fromMicros(runAt), fromMicros(created), fromMicros(updated)
	j.LeaseExpiresAt, j.StartedAt, j.CompletedAt = nullTime(leaseExp), nullTime(started), nullTime(completed)
	return &j, nil
}

// scanJobs reads every row of rows and closes it.
func scanJobs(rows *sql.Rows, err error) ([]*driver.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var jobs []*driver.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("scan job: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// Times are stored as unix microseconds, the precision PostgreSQL keeps.

func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

// nullString stores "" as NULL.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// nullInt stores 0 as NULL.
func nullInt(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: v != 0} }

// jsonText binds JSON as TEXT (a []byte would be stored as a BLOB); nil is
// NULL.
func jsonText(b json.RawMessage) sql.NullString {
	return sql.NullString{String: string(b), Valid: b != nil}
}
