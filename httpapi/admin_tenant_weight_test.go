package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
)

// TestAdmin_TenantWeight: a tenant's weight overrides its plan's in the
// document queue's fair shares, on create and PATCH; a plan change keeps
// the override, and weight 0 falls back to the plan's. The queue's weight
// is read back from the queue's own table each time.
func TestAdmin_TenantWeight(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		acme := e.createTenant("acme", map[string]any{"plan": "pro", "weight": 3}).Tenant
		e.wantWeight("created with weight 3", acme, 3, 3)
		globex := e.createTenant("globex", map[string]any{"plan": "starter"}).Tenant
		e.wantWeight("created without a weight", globex, 0, docket.PlanStarter.Weight())

		patch := func(body map[string]any) httpapi.TenantView {
			t.Helper()
			var got struct {
				Tenant httpapi.TenantView `json:"tenant"`
			}
			e.admin("PATCH", "/v1/admin/tenants/"+acme.ID, body, http.StatusOK).decode(t, &got)
			return got.Tenant
		}
		e.wantWeight("plan changed to enterprise", patch(map[string]any{"plan": "enterprise"}), 3, 3)
		e.wantWeight("weight cleared", patch(map[string]any{"weight": 0}), 0, docket.PlanEnterprise.Weight())
		e.wantWeight("weight 20", patch(map[string]any{"weight": 20}), 20, 20)
		e.wantWeight("plan and weight together", patch(map[string]any{"plan": "free", "weight": 5}), 5, 5)
		e.wantWeight("renamed", patch(map[string]any{"name": "Acme"}), 5, 5)

		var got struct {
			Tenant httpapi.TenantView `json:"tenant"`
		}
		e.admin("GET", "/v1/admin/tenants/"+acme.ID, nil, http.StatusOK).decode(t, &got)
		e.wantWeight("GET", got.Tenant, 5, 5)
		e.wantWeight("the other tenant, after", globex, 0, docket.PlanStarter.Weight())
	})
}

// wantWeight checks a tenant's weight and effective weight as the admin
// API shows them, and that the queue applies the effective one.
func (e *adminEnv) wantWeight(what string, tv httpapi.TenantView, weight, effective int) {
	e.t.Helper()
	if tv.Weight != weight || tv.EffectiveWeight != effective {
		e.t.Errorf("%s: weight %d, effective_weight %d; want %d, %d", what, tv.Weight, tv.EffectiveWeight, weight, effective)
	}
	if got := queueWeight(e.t, e.driver, tv.ID); got != effective {
		e.t.Errorf("%s: the queue's weight of tenant %s is %d, want %d", what, tv.ID, got, effective)
	}
}

// queueWeight is the weight queue.Client.SetTenantWeight last set for a
// tenant (docket_tenant_weights); 1, the default, when none is set.
func queueWeight(t *testing.T, d httpapi.TestStore, tenantID string) int {
	t.Helper()
	const q = `SELECT coalesce((SELECT weight FROM docket_tenant_weights WHERE tenant_id = $1), 1)`
	var w int
	var err error
	switch d := d.(type) {
	case *storepair.Postgres:
		err = d.Pool().QueryRow(context.Background(), q, tenantID).Scan(&w)
	case *storepair.SQLite:
		err = d.DB().QueryRowContext(context.Background(), q, tenantID).Scan(&w)
	default:
		t.Fatalf("store %T", d)
	}
	if err != nil {
		t.Fatalf("weight of tenant %s: %v", tenantID, err)
	}
	return w
}
