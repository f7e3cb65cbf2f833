package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/docketq/docket/httpapi"
)

// TestAdminJobList: GET /v1/admin/jobs lists every tenant's jobs, newest
// first, by tenant and status; POST /v1/admin/jobs/{id}/cancel cancels a
// job of any tenant.
func TestAdminJobList(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a, b := e.createTenant("Acme", nil), e.createTenant("Beta", nil)
		_, a1 := e.addDocument(a.Tenant.ID, "a1.txt")
		_, b1 := e.addDocument(b.Tenant.ID, "b1.txt")
		list := func(query string) []string {
			t.Helper()
			var v struct{ Jobs []httpapi.JobView }
			e.admin("GET", "/v1/admin/jobs"+query, nil, http.StatusOK).decode(t, &v)
			ids := make([]string, len(v.Jobs))
			for i, j := range v.Jobs {
				ids[i] = j.ID
			}
			return ids
		}
		id := func(n int64) string { return strconv.FormatInt(n, 10) }
		if got := list(""); len(got) != 2 || got[0] != id(b1.ID) || got[1] != id(a1.ID) {
			t.Errorf("every job: %v, want [%d %d]", got, b1.ID, a1.ID)
		}
		if got := list("?tenant=" + a.Tenant.ID + "&limit=5"); len(got) != 1 || got[0] != id(a1.ID) {
			t.Errorf("Acme's jobs: %v, want [%d]", got, a1.ID)
		}
		var c struct{ Job httpapi.JobView }
		e.admin("POST", "/v1/admin/jobs/"+id(a1.ID)+"/cancel", nil, http.StatusOK).decode(t, &c)
		if c.Job.ID != id(a1.ID) || c.Job.Status != "cancelled" {
			t.Errorf("cancel: %+v", c.Job)
		}
		if got := list("?status=cancelled"); len(got) != 1 || got[0] != id(a1.ID) {
			t.Errorf("cancelled jobs: %v, want [%d]", got, a1.ID)
		}
		if got := list("?status=pending"); len(got) != 1 || got[0] != id(b1.ID) {
			t.Errorf("pending jobs: %v, want [%d]", got, b1.ID)
		}
		e.admin("GET", "/v1/admin/jobs?status=nope", nil, http.StatusBadRequest)
		e.admin("GET", "/v1/admin/jobs?limit=0", nil, http.StatusBadRequest)
		e.admin("POST", "/v1/admin/jobs/999999/cancel", nil, http.StatusNotFound)
		e.admin("POST", "/v1/admin/jobs/"+id(a1.ID)+"/cancel", nil, http.StatusConflict)
		if r := e.do("GET", "/v1/admin/jobs", a.APIKey, nil); r.status != http.StatusUnauthorized {
			t.Errorf("list with a tenant key: status %d, want 401", r.status)
		}
	})
}
