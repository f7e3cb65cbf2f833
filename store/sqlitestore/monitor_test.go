package sqlitestore_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/storetest"
)

// TestMonitorConformance runs the monitoring suite. SQLite has no views:
// HealthGet computes their columns (sqlite/monitor.go), so the check of
// the views' columns is skipped.
func TestMonitorConformance(t *testing.T) {
	storetest.RunMonitor(t, storetest.MonitorConfig{
		NewStore: func(t *testing.T) (docket.Store, driver.Driver) {
			d := setup(t)
			return d.Store, d.Driver
		},
		SetTimes: func(t *testing.T, d driver.Driver, id int64, times storetest.JobTimes) {
			t.Helper()
			us := func(v time.Time) sql.NullInt64 {
				return sql.NullInt64{Int64: v.UnixMicro(), Valid: !v.IsZero()}
			}
			_, err := d.(*sqlite.Driver).DB().ExecContext(t.Context(), `UPDATE docket_jobs SET
    created_at = coalesce(?2, created_at), run_at = coalesce(?3, run_at),
    started_at = coalesce(?4, started_at), completed_at = coalesce(?5, completed_at),
    lease_expires_at = coalesce(?6, lease_expires_at)
WHERE id = ?1`, id, us(times.CreatedAt), us(times.RunAt), us(times.StartedAt), us(times.CompletedAt), us(times.LeaseExpiresAt))
			if err != nil {
				t.Fatalf("set times of job %d: %v", id, err)
			}
		},
	})
}
