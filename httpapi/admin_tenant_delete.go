package httpapi

import (
	"context"
	"net/http"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
)

// TenantDeleteView answers a tenant's deletion: what this request deleted.
type TenantDeleteView struct {
	TenantID string `json:"tenant_id"`
	// Resumed: an earlier deletion of the tenant had been cut short and
	// this request finished it.
	Resumed   bool `json:"resumed"`
	Documents int  `json:"documents"`
	Jobs      int  `json:"jobs"`
	// Records counts idempotency records and rate-limit slots.
	Records int `json:"records"`
}

// adminTenantDelete deletes a tenant and everything it owns
// (docket/tenant_delete.go): 200 TenantDeleteView; 404 for an unknown
// tenant. Once the tombstone commits, this server forgets the tenant's
// keys and ends its event streams; other servers stop accepting its keys
// within their AuthCacheTTL and end its streams within their
// StreamAuthInterval. The deletion goes on when the client goes away; one
// cut short (an error) is finished by the same request again.
func (s *Server) adminTenantDelete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx := context.WithoutCancel(r.Context())
	res, err := s.cfg.Store.TenantDelete(ctx, &docket.TenantDeleteParams{
		ID: id, DeleteBlobs: s.deleteBlobs,
		Begun: func() {
			s.keys.forget(id)
			s.streams.endTenant(id)
		},
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, TenantDeleteView{TenantID: id, Resumed: res.Resumed,
		Documents: res.Documents, Jobs: res.Jobs, Records: res.Records})
}

// deleteBlobs deletes the blobs of a batch of a deleted tenant's
// documents.
func (s *Server) deleteBlobs(ctx context.Context, keys []string) error {
	return blob.DeleteMany(ctx, s.cfg.Blobs, keys)
}
