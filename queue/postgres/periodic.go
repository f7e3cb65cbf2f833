package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// periodicRegisterSQL inserts the missing records and resets the next run
// of those whose schedule changed; an unchanged record is left alone.
const periodicRegisterSQL = `
INSERT INTO docket_periodic AS p (name, schedule, next_run)
SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
ON CONFLICT (name) DO UPDATE SET
    schedule = excluded.schedule, next_run = excluded.next_run, updated_at = now()
WHERE p.schedule <> excluded.schedule`

const periodicColumns = `name, schedule, next_run, last_tick, last_run_at, runs, missed`

// periodicAdvanceSQL is the compare-and-set of a tick. Under READ COMMITTED
// a second UPDATE of the row waits for the first's transaction and then
// re-checks its WHERE against the row as committed: once next_run moved
// on, it changes nothing.
const periodicAdvanceSQL = `
UPDATE docket_periodic SET
    last_tick = $4, next_run = $5, last_run_at = clock_timestamp(),
    runs = runs + 1, missed = missed + $6, updated_at = now()
WHERE name = $1 AND schedule = $2 AND next_run = $3`

// Now reads the server's clock (clock_timestamp(), as leases use).
func (e *Executor) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := e.db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("read the clock: %w", interpretError(err))
	}
	return now, nil
}

// PeriodicRegister makes sure each task has a record and returns them.
func (e *Executor) PeriodicRegister(ctx context.Context, params []*driver.PeriodicRegisterParams) ([]*driver.PeriodicRecord, error) {
	names := make([]string, len(params))
	specs := make([]string, len(params))
	nexts := make([]time.Time, len(params))
	for i, p := range params {
		if p.Name == "" || p.Schedule == "" || p.NextRun.IsZero() {
			return nil, fmt.Errorf("%w: periodic register needs a name, a schedule and a next run", driver.ErrInvalid)
		}
		names[i], specs[i], nexts[i] = p.Name, p.Schedule, p.NextRun
	}
	var out []*driver.PeriodicRecord
	err := e.inTx(ctx, func(x *Executor) error {
		if _, err := x.db.Exec(ctx, periodicRegisterSQL, names, specs, nexts); err != nil {
			return err
		}
		rows, err := x.db.Query(ctx, `SELECT `+periodicColumns+` FROM docket_periodic
WHERE name = ANY($1) ORDER BY array_position($1, name)`, names)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanPeriodic)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register periodic tasks: %w", interpretError(err))
	}
	return out, nil
}

// PeriodicAdvance records the run of a tick if the record still expects it.
func (e *Executor) PeriodicAdvance(ctx context.Context, p *driver.PeriodicAdvanceParams) (bool, error) {
	if p.Name == "" || p.Tick.IsZero() || p.NextRun.IsZero() {
		return false, fmt.Errorf("%w: periodic advance needs a name, a tick and a next run", driver.ErrInvalid)
	}
	if e.tx != nil && p.TxIdleLimit > 0 {
		// The update below locks the record until the commit: a
		// transaction left idle past the limit is ended by the server
		// (SET LOCAL scope), so a stopped leader cannot hold it from the
		// next one.
		if _, err := e.db.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, true)`,
			strconv.FormatInt(max(p.TxIdleLimit.Milliseconds(), 1), 10)); err != nil {
			return false, fmt.Errorf("advance periodic task %s: %w", p.Name, interpretError(err))
		}
	}
	tag, err := e.db.Exec(ctx, periodicAdvanceSQL, p.Name, p.Schedule, p.Expect, p.Tick, p.NextRun, p.Missed)
	if err != nil {
		return false, fmt.Errorf("advance periodic task %s: %w", p.Name, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// PeriodicList returns every record by name.
func (e *Executor) PeriodicList(ctx context.Context) ([]*driver.PeriodicRecord, error) {
	rows, err := e.db.Query(ctx, `SELECT `+periodicColumns+` FROM docket_periodic ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list periodic tasks: %w", interpretError(err))
	}
	out, err := pgx.CollectRows(rows, scanPeriodic)
	if err != nil {
		return nil, fmt.Errorf("list periodic tasks: %w", interpretError(err))
	}
	return out, nil
}

func scanPeriodic(row pgx.CollectableRow) (*driver.PeriodicRecord, error) {
	var (
		r             driver.PeriodicRecord
		tick, lastRun *time.Time
	)
	if err := row.Scan(&r.Name, &r.Schedule, &r.NextRun, &tick, &lastRun, &r.Runs, &r.Missed); err != nil {
		return nil, err
	}
	r.NextRun = r.NextRun.UTC()
	if tick != nil {
		r.LastTick = tick.UTC()
	}
	if lastRun != nil {
		r.LastRunAt = lastRun.UTC()
	}
	return &r, nil
}
