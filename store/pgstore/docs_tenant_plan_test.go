package pgstore_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/store/pgstore"
)

// TestTenantListPlan_Explain: a page of the tenant list, from the oldest
// or after a cursor, custom and generic, is an index scan of
// docket_tenants_list at 2·10^4 tenants, with no sort of every tenant.
func TestTenantListPlan_Explain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.exec(`INSERT INTO docket_tenants (id, name, plan, created_at)
SELECT 't' || g, 'n' || g, 'free', timestamptz '2026-01-01' + g * interval '1 second' FROM generate_series(0, 19999) g`)
	f.exec(`ANALYZE docket_tenants`)
	for _, call := range []string{`('0001-01-01Z', '', 51)`, `('2026-01-01Z'::timestamptz + interval '10000 seconds', 't10000', 51)`} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan := explainAsTenant(t, f, false, mode, "tenant_list", "(timestamptz, text, bigint)", pgstore.TenantListSQL, call)
			if !strings.Contains(plan, "Index Scan using docket_tenants_list") || strings.Contains(plan, "Sort") {
				t.Errorf("tenant list %s, %s: want an index scan of docket_tenants_list, no sort:\n%s", call, mode, plan)
			}
		}
	}
	ts, err := f.d.TenantList(f.ctx, &docket.TenantListParams{After: "t10000", Limit: 2})
	if err != nil || len(ts) != 2 || ts[0].ID != "t10001" || ts[1].ID != "t10002" {
		t.Fatalf("TenantList(after t10000, limit 2): %v (%v)", ts, err)
	}
}
