package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/drivertest"
	"github.com/docketq/docket/queue/postgres"
)

// TestConformance runs the driver conformance suite, each subtest on a
// fresh migrated database of the cluster TestMain starts.
func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.RunConfig(t, drivertest.Config{
		NewDriver: func(t *testing.T) driver.Driver { return newDriver(t) }, // main_test.go
		BeginNative: func(t *testing.T, d driver.Driver) drivertest.NativeTx {
			ctx := context.WithoutCancel(t.Context())
			tx, err := d.(*postgres.Driver).Pool().Begin(ctx)
			if err != nil {
				t.Fatalf("begin: %v", err)
			}
			return drivertest.NativeTx{
				Tx:       tx,
				Commit:   func() error { return tx.Commit(ctx) },
				Rollback: func() error { return tx.Rollback(ctx) },
			}
		},
		EnqueueSQL: func(t *testing.T, d driver.Driver, p *driver.JobInsertParams) int64 {
			var runAt *time.Time
			if !p.RunAt.IsZero() {
				runAt = &p.RunAt
			}
			var uniqueKey *string
			if p.UniqueKey != "" {
				uniqueKey = &p.UniqueKey
			}
			var id int64
			err := d.(*postgres.Driver).Pool().QueryRow(t.Context(),
				`SELECT docket_enqueue($1, $2, $3, $4, $5, $6, $7, $8)`,
				p.Queue, p.Kind, p.TenantID, string(p.Args), p.Priority, p.MaxAttempts, runAt, uniqueKey,
			).Scan(&id)
			if err != nil {
				t.Fatalf("docket_enqueue: %v", err)
			}
			return id
		},
	})
}
