package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// statsSQL reads a queue's counts per state, the wait of its oldest
// pending job, dead rows in docket_jobs and the age of the oldest
// transaction in this database that holds back vacuum, and whether the
// queue is paused.
const statsSQL = `
SELECT
    (SELECT coalesce(jsonb_object_agg(state, n), '{}')
     FROM (SELECT state, count(*) AS n FROM docket_jobs WHERE queue = $1 GROUP BY state) s),
    coalesce((SELECT extract(epoch FROM clock_timestamp() - min(run_at))::float8
              FROM docket_jobs WHERE queue = $1 AND state = 'pending'), 0),
    coalesce((SELECT n_dead_tup FROM pg_stat_user_tables
              WHERE relid = 'docket_jobs'::regclass), 0),
    coalesce((SELECT extract(epoch FROM clock_timestamp() - min(xact_start))::float8
              FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()
                AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)), 0),
    EXISTS (SELECT FROM docket_queues WHERE name = $1 AND paused_at IS NOT NULL)`

// QueueStats reports counts per state and store health for a queue.
func (e *Executor) QueueStats(ctx context.Context, queueName string) (*driver.QueueStats, error) {
	var counts map[string]int
	var pendingSecs, xactSecs float64
	var dead int64
	var paused bool
	err := e.db.QueryRow(ctx, statsSQL, queueName).Scan(&counts, &pendingSecs, &dead, &xactSecs, &paused)
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", interpretError(err))
	}
	st := &driver.QueueStats{
		Queue:            queueName,
		Counts:           make(map[driver.State]int, len(counts)),
		OldestPendingAge: seconds(pendingSecs),
		DeadTuples:       dead,
		OldestXactAge:    seconds(xactSecs),
		Paused:           paused,
	}
	for s, n := range counts {
		st.Counts[driver.State(s)] = n
	}
	return st, nil
}

func seconds(s float64) time.Duration {
	return time.Duration(max(s, 0) * float64(time.Second))
}
