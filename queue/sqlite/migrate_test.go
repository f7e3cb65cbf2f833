package sqlite_test

import (
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// TestMigrate_EngineOnly: the engine's line alone creates no document
// table, and records itself as the line "engine".
func TestMigrate_EngineOnly(t *testing.T) {
	t.Parallel()
	d := setup(t)
	var docs, others int
	err := d.DB().QueryRowContext(t.Context(), `SELECT
    (SELECT count(*) FROM sqlite_master WHERE name IN ('docket_tenants', 'docket_api_keys', 'docket_documents',
        'docket_chunks', 'docket_rate_slots', 'docket_idempotency', 'docket_tenant_deletions')),
    (SELECT count(*) FROM docket_migrations WHERE line <> 'engine')`).Scan(&docs, &others)
	if err != nil || docs != 0 || others != 0 {
		t.Errorf("engine-only schema: %d document tables, %d migrations of other lines (%v); want none", docs, others, err)
	}
}

// Each trigger of the engine is defined once, in its repeatable file; no
// migration creates one.
func TestMigrations_CodeInRepeatableFiles(t *testing.T) {
	t.Parallel()
	if err := sqlite.EngineLine().CheckDefinitions(); err != nil {
		t.Fatal(err)
	}
}
