package httpapi_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/httpapi"
)

// DELETE /v1/admin/tenants/{id} deletes the tenant with its documents,
// blobs and jobs, on both stores: its key answers 401 at once, the tenant
// is 404, another tenant keeps everything, and a second delete is 404.
func TestAdmin_TenantDelete(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("tenant-a", nil)
		b := e.createTenant("tenant-b", nil)
		var docs []*docket.Document
		for _, name := range []string{"one.txt", "two.txt"} {
			d, _ := e.addDocument(a.Tenant.ID, name)
			docs = append(docs, d)
		}
		running := e.claim(time.Hour) // a's first job, running
		other, _ := e.addDocument(b.Tenant.ID, "b.txt")
		if r := e.do("GET", "/v1/documents", a.APIKey, nil); r.status != http.StatusOK {
			t.Fatalf("GET /v1/documents before: %d", r.status)
		}

		var got httpapi.TenantDeleteView
		e.admin("DELETE", "/v1/admin/tenants/"+a.Tenant.ID, nil, http.StatusOK).decode(t, &got)
		want := httpapi.TenantDeleteView{TenantID: a.Tenant.ID, Documents: 2, Jobs: 2}
		if got != want {
			t.Fatalf("delete answered %+v, want %+v", got, want)
		}
		if r := e.do("GET", "/v1/documents", a.APIKey, nil); r.status != http.StatusUnauthorized {
			t.Errorf("the deleted tenant's key: status %d, want 401", r.status)
		}
		e.admin("GET", "/v1/admin/tenants/"+a.Tenant.ID, nil, http.StatusNotFound)
		e.admin("DELETE", "/v1/admin/tenants/"+a.Tenant.ID, nil, http.StatusNotFound)
		for _, d := range docs {
			if _, _, err := e.blobs.Open(e.ctx, d.BlobKey); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("blob %s of a deleted document: %v, want not found", d.BlobKey, err)
			}
		}
		if _, err := e.queue.Get(e.ctx, running.ID); !errors.Is(err, docket.ErrNotFound) {
			t.Errorf("the deleted tenant's running job: %v, want not found", err)
		}
		// The other tenant is untouched.
		if r := e.do("GET", "/v1/documents/"+other.ID, b.APIKey, nil); r.status != http.StatusOK {
			t.Errorf("the other tenant's document: %d", r.status)
		}
		if rc, _, err := e.blobs.Open(e.ctx, other.BlobKey); err != nil {
			t.Errorf("the other tenant's blob: %v", err)
		} else {
			_ = rc.Close()
		}
	})
}
