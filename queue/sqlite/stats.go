package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

const (
	stateCountsSQL   = `SELECT state, count(*) FROM docket_jobs WHERE queue = ? GROUP BY state`
	oldestPendingSQL = `SELECT min(run_at) FROM docket_jobs WHERE queue = ? AND state = 'pending'`
	queuePausedSQL   = `SELECT EXISTS (SELECT 1 FROM docket_queues WHERE queue = ? AND paused_at IS NOT NULL)`
)

// QueueStats reports counts per state and store health. SQLite has no dead
// tuples or vacuum horizon: DeadTuples reports the database file's free
// pages instead (PRAGMA freelist_count), space left by deleted rows that
// only VACUUM returns; OldestXactAge is 0.
func (e *executor) QueueStats(ctx context.Context, queueName string) (*driver.QueueStats, error) {
	st := &driver.QueueStats{Queue: queueName, Counts: make(map[driver.State]int)}
	err := e.read(ctx, func(q querier, now int64) error {
		if err := stateCounts(ctx, q, queueName, st.Counts); err != nil {
			return err
		}
		var oldest sql.NullInt64
		if err := q.QueryRowContext(ctx, oldestPendingSQL, queueName).Scan(&oldest); err != nil {
			return err
		}
		if oldest.Valid && oldest.Int64 < now {
			st.OldestPendingAge = time.Duration(now-oldest.Int64) * time.Microsecond
		}
		if err := q.QueryRowContext(ctx, queuePausedSQL, queueName).Scan(&st.Paused); err != nil {
			return err
		}
		return q.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&st.DeadTuples)
	})
	if err != nil {
		return nil, fmt.Errorf("queue %s stats: %w", queueName, err)
	}
	return st, nil
}

func stateCounts(ctx context.Context, q querier, queueName string, counts map[driver.State]int) error {
	rows, err := q.QueryContext(ctx, stateCountsSQL, queueName)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return err
		}
		counts[driver.State(state)] = n
	}
	return rows.Err()
}
