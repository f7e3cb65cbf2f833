package sqlitestore

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

// TestTenantListPlan: a page of the tenant list, from the oldest or after
// a cursor, is one range scan of docket_tenants_list at 2·10^4 tenants, with
// no sort of every tenant.
func TestTenantListPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openPlan(t)
	_, err := d.d.DB().ExecContext(ctx, `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 19999)
INSERT INTO docket_tenants (id, name, plan, created_at, updated_at) SELECT 't' || n, 'n' || n, 'free', 1000000 + n, 0 FROM g`)
	if err != nil {
		t.Fatal(err)
	}
	for _, analyze := range []bool{false, true} {
		if analyze {
			if _, err := d.d.DB().ExecContext(ctx, "ANALYZE"); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]any{{int64(math.MinInt64), "", 51}, {1010000, "t10000", 51}} {
			plan, err := queryPlan(ctx, d, tenantListSQL, args)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(plan, "\n")
			if !strings.Contains(all, "USING INDEX docket_tenants_list ((created_at,id)>(?,?))") || strings.Contains(all, "TEMP B-TREE") {
				t.Errorf("tenant list after %v (analyzed %t): want a range scan of docket_tenants_list, no sort:\n%s", args[:2], analyze, all)
			}
		}
	}
	ts, err := d.TenantList(ctx, &docket.TenantListParams{After: "t10000", Limit: 2})
	if err != nil || len(ts) != 2 || ts[0].ID != "t10001" || ts[1].ID != "t10002" {
		t.Fatalf("TenantList(after t10000, limit 2): %v (%v)", ts, err)
	}
}
