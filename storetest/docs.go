package storetest

import (
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
)

// DocsConfig configures a run of the document-store suite.
type DocsConfig struct {
	// NewStore returns a fresh, migrated, empty store and the queue driver
	// on the same database (for our drivers, the same object twice). It
	// registers its own cleanup and fails t when it cannot.
	NewStore func(t *testing.T) (docket.Store, driver.Driver)
}

// RunDocs runs the document-store suite against the stores cfg.NewStore
// returns: every method of docket.Store and docket.Tx as their doc comments
// specify, the document status derived from its job, completion of a job
// in the same transaction as the document's writes, and tenant isolation
// of every Tx method.
//
// Subtests are grouped by method and run in parallel, each against its own
// store. Like drivertest.Run, it never sleeps to synchronise: the rate-limit window
// that must pass is polled with a deadline.
func RunDocs(t *testing.T, cfg DocsConfig) {
	t.Helper()
	if cfg.NewStore == nil {
		t.Fatal("storetest: DocsConfig.NewStore is nil")
	}
	for _, g := range docGroups() {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.checks {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					store, driver := cfg.NewStore(t)
					if store == nil || driver == nil {
						t.Fatal("NewStore returned nil")
					}
					c.fn(newDocFixture(t, store, driver))
				})
			}
		})
	}
}

// docGroup is the checks of one method (or one concern), run as subtests
// named group/check.
type docGroup struct {
	name   string
	checks []docCheck
}

// docCheck is one check. It takes a testing.TB, not a *testing.T, so that
// the self-check can run it on a deliberately broken store and record that
// it fails.
type docCheck struct {
	name string
	fn   func(f *docFixture)
}

// docGroups lists every group of the suite.
func docGroups() []docGroup {
	return []docGroup{
		{"Tenant", tenantChecks()},
		{"TenantDelete", tenantDeleteChecks()},
		{"TenantResume", tenantResumeChecks()}, // docs_tenant_resume.go
		{"APIKey", apiKeyChecks()},
		{"InTenant", txChecks()},
		{"DocumentInsert", documentInsertChecks()},
		{"DocumentList", documentListChecks()},
		{"DocumentUpdate", documentUpdateChecks()},
		{"DocumentDelete", documentDeleteChecks()},
		{"DocumentStatus", documentStatusChecks()},
		{"CompleteInTx", completeInTxChecks()},
		{"Chunk", chunkChecks()},
		{"ChunkSearch", chunkSearchChecks()},
		{"RateLimit", rateLimitChecks()},
		{"Idempotency", idempotencyChecks()},
		{"Isolation", isolationChecks()},
	}
}

// findDocCheck returns the check named "group/check", or nil.
func findDocCheck(name string) func(f *docFixture) {
	for _, g := range docGroups() {
		for _, c := range g.checks {
			if g.name+"/"+c.name == name {
				return c.fn
			}
		}
	}
	return nil
}
