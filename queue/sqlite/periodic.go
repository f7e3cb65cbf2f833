package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// periodicRegisterSQL inserts a missing record and resets the next run of
// one whose schedule changed; an unchanged record is left alone.
const periodicRegisterSQL = `
INSERT INTO docket_periodic (name, schedule, next_run, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
ON CONFLICT (name) DO UPDATE SET
	schedule = excluded.schedule, next_run = excluded.next_run, updated_at = excluded.updated_at
WHERE schedule <> excluded.schedule`

const periodicColumns = `name, schedule, next_run, last_tick, last_run_at, runs, missed`

// periodicAdvanceSQL is the compare-and-set of a tick. Write transactions
// run one at a time, so a second one sees the first's next_run.
const periodicAdvanceSQL = `
UPDATE docket_periodic SET
	last_tick = ?4, next_run = ?5, last_run_at = ?7, runs = runs + 1, missed = missed + ?6, updated_at = ?7
WHERE name = ?1 AND schedule = ?2 AND next_run = ?3`

// Now returns the driver's clock (Config.Now).
func (e *executor) Now(context.Context) (time.Time, error) { return e.d.now(), nil }

// PeriodicRegister makes sure each task has a record and returns them.
func (e *executor) PeriodicRegister(ctx context.Context, params []*driver.PeriodicRegisterParams) ([]*driver.PeriodicRecord, error) {
	for _, p := range params {
		if p.Name == "" || p.Schedule == "" || p.NextRun.IsZero() {
			return nil, fmt.Errorf("register periodic tasks: %w: a name, a schedule and a next run are required", driver.ErrInvalid)
		}
	}
	out := make([]*driver.PeriodicRecord, len(params))
	err := e.write(ctx, func(t *txn) error {
		for i, p := range params {
			if _, err := t.exec(ctx, periodicRegisterSQL, p.Name, p.Schedule, toMicros(p.NextRun), t.now); err != nil {
				return err
			}
			r, err := scanPeriodic(t.queryRow(ctx, `SELECT `+periodicColumns+` FROM docket_periodic WHERE name = ?`, p.Name))
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("register periodic tasks: %w", err)
	}
	return out, nil
}

// PeriodicAdvance records the run of a tick if the record still expects it.
func (e *executor) PeriodicAdvance(ctx context.Context, p *driver.PeriodicAdvanceParams) (bool, error) {
	if p.Name == "" || p.Tick.IsZero() || p.NextRun.IsZero() {
		return false, fmt.Errorf("advance periodic task: %w: a name, a tick and a next run are required", driver.ErrInvalid)
	}
	var changed int64
	err := e.write(ctx, func(t *txn) error {
		res, err := t.exec(ctx, periodicAdvanceSQL, p.Name, p.Schedule, toMicros(p.Expect),
			toMicros(p.Tick), toMicros(p.NextRun), p.Missed, t.now)
		if err != nil {
			return err
		}
		changed, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("advance periodic task %s: %w", p.Name, err)
	}
	return changed == 1, nil
}

// PeriodicList returns every record by name.
func (e *executor) PeriodicList(ctx context.Context) ([]*driver.PeriodicRecord, error) {
	var out []*driver.PeriodicRecord
	err := e.read(ctx, func(q querier, _ int64) error {
		rows, err := q.QueryContext(ctx, `SELECT `+periodicColumns+` FROM docket_periodic ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanPeriodic(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list periodic tasks: %w", err)
	}
	return out, nil
}

func scanPeriodic(row rowScanner) (*driver.PeriodicRecord, error) {
	var (
		r             driver.PeriodicRecord
		next          int64
		tick, lastRun sql.NullInt64
	)
	if err := row.Scan(&r.Name, &r.Schedule, &next, &tick, &lastRun, &r.Runs, &r.Missed); err != nil {
		return nil, err
	}
	r.NextRun, r.LastTick, r.LastRunAt = fromMicros(next), nullTime(tick), nullTime(lastRun)
	return &r, nil
}
