package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// deleteFinishedSQL deletes up to $4 finished jobs, oldest first per state,
// with their attempt records, from the retention index. $1, $2, $3 are the
// ages in microseconds of completed, failed and cancelled jobs to keep.
//
// The cut-off is statement_timestamp(), which is stable: the bound is an
// Index Cond and the scan stops at the first job too young to go. With
// clock_timestamp() (volatile) it was a Filter, and a sweep that deleted
// nothing walked every finished job and its heap row: 3.7 s and 290,000
// buffers per sweep after a 10^6-job drain (docs/benchmarks.md).
const deleteFinishedSQL = `
WITH doomed AS (
    (SELECT id FROM docket_jobs
     WHERE state = 'completed' AND completed_at < statement_timestamp() - $1::bigint * interval '1 microsecond'
     ORDER BY completed_at LIMIT $4)
    UNION ALL
    (SELECT id FROM docket_jobs
     WHERE state = 'failed' AND completed_at < statement_timestamp() - $2::bigint * interval '1 microsecond'
     ORDER BY completed_at LIMIT $4)
    UNION ALL
    (SELECT id FROM docket_jobs
     WHERE state = 'cancelled' AND completed_at < statement_timestamp() - $3::bigint * interval '1 microsecond'
     ORDER BY completed_at LIMIT $4)
    LIMIT $4
), deleted AS (
    DELETE FROM docket_jobs j USING doomed d
    WHERE j.id = d.id AND NOT EXISTS (SELECT FROM docket_slot_holds h WHERE h.job_id = d.id)
    RETURNING j.id
), attempts AS (
    DELETE FROM docket_job_attempts a USING deleted d WHERE a.job_id = d.id
)
SELECT count(*) FROM deleted`

// JobDeleteFinished deletes one batch of finished jobs older than their
// state's age and returns how many it deleted.
func (e *Executor) JobDeleteFinished(ctx context.Context, params *driver.JobDeleteFinishedParams) (int, error) {
	limit := params.Limit
	if limit <= 0 {
		limit = 1000
	}
	var n int64
	err := e.db.QueryRow(ctx, deleteFinishedSQL, micros(max(params.CompletedAge, 0)),
		micros(max(params.FailedAge, 0)), micros(max(params.CancelledAge, 0)), limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("delete finished jobs: %w", interpretError(err))
	}
	return int(n), nil
}
