package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// insertJobsSQL calls docket_insert_jobs (repeatable/insert_jobs.sql),
// the one implementation of enqueueing, shared with docket_enqueue. $13
// says whether the function calls pg_notify itself: only in a caller's
// transaction; elsewhere JobInsertMany notifies after the commit
// (notify_post.go).
//
// It reads back only what the server decided for each new job (id, state,
// run_at, created_at) and its args as stored (jsonb's normal form); the
// rest are the params and the table's defaults (newJob). Reading all 27
// columns (a field selection each, from the function's row) cost 8 % of
// the insert's server CPU (41.7 against 38.3 ms per 1,000 jobs, measured
// side by side) and half of the Go side's (scanning; 1.49 against 0.73 s
// of CPU in a 20 s steady run): docs/benchmarks.md.
// Duplicates are read whole, by key, as the jobs that hold the key
// (JobInsertMany).
var insertJobsSQL = `SELECT r.ord, (r.job).id, (r.job).state, (r.job).args, (r.job).run_at, (r.job).created_at
FROM docket_insert_jobs($1::text[], $2::text[], $3::text[], $4::text[]::jsonb[], $5::int[], $6::int[],
                        $7::timestamptz[], $8::text[], $9::bigint[], $10::boolean[], $11::text[]::jsonb[],
                        $12::int[], $13::boolean) r
WHERE (r.job).id IS NOT NULL AND NOT r.duplicate`

// existingByKeySQL reads, with a new snapshot, the jobs holding unique keys
// whose insert lost a race to a transaction that committed after the
// insert statement began.
var existingByKeySQL = `SELECT ` + jobColumns + `
FROM docket_jobs WHERE (tenant_id, unique_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`

// JobInsertMany inserts jobs in one statement; see driver.Executor.
func (e *Executor) JobInsertMany(ctx context.Context, params []*driver.JobInsertParams) ([]driver.InsertResult, error) {
	if len(params) == 0 {
		return nil, nil
	}
	for _, p := range params {
		if err := driver.ValidateQueueName(p.Queue); err != nil {
			return nil, err
		}
	}
	results := make([]driver.InsertResult, len(params))
	err := e.retryDeadlock(ctx, func() error {
		clear(results)
		return e.insertJobs(ctx, params, results)
	})
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", interpretError(err))
	}
	// A key already taken (by an earlier job, one of this batch, or a
	// transaction that committed while our insert ran) is read by a new
	// statement, which sees the job holding it. The holder cannot have
	// been deleted since (it is not finished), so this loop ends at once
	// in practice.
	for range 3 {
		missing := missingKeys(params, results)
		if len(missing) == 0 {
			if err := e.notifyInserted(ctx, results); err != nil {
				return nil, fmt.Errorf("insert jobs: %w", interpretError(err))
			}
			return results, nil
		}
		if err := e.fillExisting(ctx, params, results, missing); err != nil {
			return nil, fmt.Errorf("insert jobs: %w", interpretError(err))
		}
	}
	return nil, fmt.Errorf("insert jobs: unique key of job #%d neither inserted nor found", missingKeys(params, results)[0])
}

// notifyInserted sends, unless the statement did, a docket_insert
// notification for each queue with a job pending now.
func (e *Executor) notifyInserted(ctx context.Context, results []driver.InsertResult) error {
	if e.notifiesInline() {
		return nil
	}
	var queues []string
	for _, r := range results {
		if r.Job != nil && r.Job.State == driver.StatePending {
			queues = append(queues, r.Job.Queue)
		}
	}
	return e.notify(ctx, queueNotes(driver.TopicInsert, queues...)...)
}

func (e *Executor) insertJobs(ctx context.Context, params []*driver.JobInsertParams, results []driver.InsertResult) error {
	n := len(params)
	var (
		queues, kinds, tenants, args, keys = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		prios, maxAttempts                 = make([]int32, n), make([]int32, n)
		runAts                             = make([]*time.Time, n)
		retryOf                            = make([]int64, n)
		failOnTimeout                      = make([]bool, n)
		metadata                           = make([]*string, n)
		costs                              = make([]int32, n)
	)
	for i, p := range params {
		queues[i], kinds[i], tenants[i], keys[i] = p.Queue, p.Kind, p.TenantID, p.UniqueKey
		args[i] = string(p.Args)
		if len(p.Args) == 0 {
			args[i] = "{}"
		}
		prios[i], maxAttempts[i] = int32(p.Priority), int32(p.MaxAttempts)
		if p.MaxAttempts == 0 {
			maxAttempts[i] = driver.DefaultMaxAttempts
		}
		if !p.RunAt.IsZero() {
			runAts[i] = &p.RunAt
		}
		retryOf[i], failOnTimeout[i] = p.RetryOf, p.FailOnTimeout
		costs[i] = int32(max(p.Cost, 1))
		if len(p.Metadata) > 0 {
			b, err := json.Marshal(p.Metadata)
			if err != nil {
				return fmt.Errorf("job metadata: %w", err)
			}
			s := string(b)
			metadata[i] = &s
		}
	}
	rows, err := e.db.Query(ctx, insertJobsSQL, queues, kinds, tenants, args, prios, maxAttempts,
		runAts, keys, retryOf, failOnTimeout, metadata, costs, e.notifiesInline())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			ord            int64
			id             int64
			state          string
			storedArgs     []byte
			runAt, created time.Time
		)
		if err := rows.Scan(&ord, &id, &state, &storedArgs, &runAt, &created); err != nil {
			return err
		}
		results[ord-1] = driver.InsertResult{Job: newJob(params[ord-1], id, driver.State(state), storedArgs, runAt, created)}
	}
	return rows.Err()
}

// newJob is the job docket_insert_jobs stored for p: the server's id,
// state, args, run_at and created_at, the params with the function's
// defaults (coalesce, nullif), and the table's defaults for the rest
// (docket_jobs in migrations/001_schema.sql; updated_at = created_at, both
// now()). The conformance case JobInsertMany/ResultIsStoredJob compares it
// with the row read back.
func newJob(p *driver.JobInsertParams, id int64, state driver.State, args []byte, runAt, created time.Time) *driver.Job {
	j := &driver.Job{
		ID: id, Queue: p.Queue, Kind: p.Kind, TenantID: p.TenantID, Args: args, State: state,
		Priority: p.Priority, MaxAttempts: p.MaxAttempts, RunAt: runAt, UniqueKey: p.UniqueKey,
		RetryOf: p.RetryOf, FailOnTimeout: p.FailOnTimeout, CreatedAt: created, UpdatedAt: created,
		Cost: max(p.Cost, 1),
	}
	if j.MaxAttempts == 0 {
		j.MaxAttempts = driver.DefaultMaxAttempts
	}
	if len(p.Metadata) > 0 {
		j.Metadata = maps.Clone(p.Metadata)
	}
	return j
}

// missingKeys returns the indexes of params without a result.
func missingKeys(params []*driver.JobInsertParams, results []driver.InsertResult) []int {
	var missing []int
	for i := range params {
		if results[i].Job == nil {
			missing = append(missing, i)
		}
	}
	return missing
}

func (e *Executor) fillExisting(ctx context.Context, params []*driver.JobInsertParams, results []driver.InsertResult, missing []int) error {
	tenants, keys := make([]string, len(missing)), make([]string, len(missing))
	for k, i := range missing {
		tenants[k], keys[k] = params[i].TenantID, params[i].UniqueKey
	}
	rows, err := e.db.Query(ctx, existingByKeySQL, tenants, keys)
	if err != nil {
		return err
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		for _, i := range missing {
			if params[i].TenantID == j.TenantID && params[i].UniqueKey == j.UniqueKey {
				results[i] = driver.InsertResult{Job: j, Duplicate: true}
			}
		}
	}
	return nil
}

// JobRetry inserts a new pending job retrying a failed or cancelled one,
// or re-opens a workflow parent (reopen).
func (e *Executor) JobRetry(ctx context.Context, params *driver.JobRetryParams) (*driver.Job, error) {
	var job *driver.Job
	err := e.inTx(ctx, func(x *Executor) error {
		orig, err := x.jobGet(ctx, params.ID, params.TenantID)
		if err != nil {
			return err
		}
		if orig.State != driver.StateFailed && orig.State != driver.StateCancelled {
			return fmt.Errorf("%w: job %d is %s, not failed or cancelled", driver.ErrConflict, orig.ID, orig.State)
		}
		var parent bool
		if err := x.db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM docket_jobs WHERE parent_id = $1)`, orig.ID).Scan(&parent); err != nil {
			return err
		}
		if parent {
			job, err = x.reopen(ctx, orig.ID)
			if errors.Is(err, pgx.ErrNoRows) { // it changed meanwhile: a concurrent retry
				return fmt.Errorf("%w: job %d is no longer failed or cancelled", driver.ErrConflict, orig.ID)
			}
			return err
		}
		res, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{{
			Queue: orig.Queue, Kind: orig.Kind, TenantID: orig.TenantID, Args: orig.Args,
			Priority: orig.Priority, MaxAttempts: orig.MaxAttempts, RetryOf: orig.ID, Metadata: orig.Metadata,
			FailOnTimeout: orig.FailOnTimeout, Cost: orig.Cost,
		}})
		if err != nil {
			return err
		}
		job = res[0].Job
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("retry job %d: %w", params.ID, interpretError(err))
	}
	return job, nil
}
