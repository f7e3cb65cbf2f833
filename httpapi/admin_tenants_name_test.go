package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/docketq/docket/httpapi"
)

// TestAdminTenantList_ByName: GET /v1/admin/tenants?name= lists the
// tenant of that name only, or none.
func TestAdminTenantList_ByName(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("Acme", nil)
		e.createTenant("Beta", nil)
		var list struct {
			Tenants    []httpapi.TenantView
			NextCursor *string `json:"next_cursor"`
		}
		e.admin("GET", "/v1/admin/tenants?name=Acme&limit=1", nil, http.StatusOK).decode(t, &list)
		if len(list.Tenants) != 1 || list.Tenants[0].ID != a.Tenant.ID || list.NextCursor != nil {
			t.Errorf("tenants named Acme: %+v, want %s alone", list, a.Tenant.ID)
		}
		list.Tenants = nil
		e.admin("GET", "/v1/admin/tenants?name=Nobody", nil, http.StatusOK).decode(t, &list)
		if len(list.Tenants) != 0 {
			t.Errorf("tenants named Nobody: %+v, want none", list.Tenants)
		}
	})
}
