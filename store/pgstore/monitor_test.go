package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/storetest"
)

// TestMonitorConformance runs the monitoring suite: the views' columns and
// their numbers against known states, each subtest on a fresh database.
func TestMonitorConformance(t *testing.T) {
	storetest.RunMonitor(t, storetest.MonitorConfig{
		NewStore: func(t *testing.T) (docket.Store, driver.Driver) {
			d := newStore(t) // main_test.go
			return d.Store, d.Driver
		},
		SetTimes: func(t *testing.T, d driver.Driver, id int64, times storetest.JobTimes) {
			t.Helper()
			ts := func(v time.Time) *time.Time {
				if v.IsZero() {
					return nil
				}
				return &v
			}
			_, err := d.(*postgres.Driver).Pool().Exec(t.Context(), `UPDATE docket_jobs SET
    created_at = coalesce($2, created_at), run_at = coalesce($3, run_at),
    started_at = coalesce($4, started_at), completed_at = coalesce($5, completed_at),
    lease_expires_at = coalesce($6, lease_expires_at)
WHERE id = $1`, id, ts(times.CreatedAt), ts(times.RunAt), ts(times.StartedAt), ts(times.CompletedAt), ts(times.LeaseExpiresAt))
			if err != nil {
				t.Fatalf("set times of job %d: %v", id, err)
			}
		},
		ViewColumns: func(t *testing.T, d driver.Driver, view string) []string {
			t.Helper()
			rows, err := d.(*postgres.Driver).Pool().Query(t.Context(), `SELECT column_name::text FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, view)
			if err != nil {
				t.Fatalf("columns of %s: %v", view, err)
			}
			cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatalf("columns of %s: %v", view, err)
			}
			return cols
		},
	})
}
