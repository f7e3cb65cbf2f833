package pgstore_test

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// TestPause_TenantScopedInsert: a tenant-scoped transaction (docket_app,
// under row-level security) creates a paused tenant's claim row through
// the insert trigger, which reads the pause table as docket_app.
func TestPause_TenantScopedInsert(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.d.Executor().TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "a", Paused: true}); err != nil {
		t.Fatal(err)
	}
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // after Commit, a no-op
	for _, sql := range []string{
		`SELECT set_config('role', 'docket_app', true)`,
		`SELECT set_config('app.tenant_id', 'a', true)`,
		`SELECT docket_enqueue('q', 'k', 'a')`,
	} {
		if _, err := tx.Exec(f.ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := f.d.Pool().QueryRow(f.ctx, `SELECT count(*) FROM docket_tenant_queues WHERE tenant_id = 'a' AND paused`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d paused claim rows of tenant a (%v), want 1", n, err)
	}
}
