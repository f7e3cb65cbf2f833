package httpapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
)

// adminTenantCreate creates a tenant with its first API key and its queue
// concurrency limit: 201 {tenant, api_key, key}. The key is shown only
// here.
func (s *Server) adminTenantCreate(w http.ResponseWriter, r *http.Request) error {
	var in tenantInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return errorf(http.StatusBadRequest, "name is required")
	}
	plan, err := in.validate()
	if err != nil {
		return err
	}
	p := &docket.TenantCreateParams{ID: newTenantID(), Name: *in.Name, Plan: docket.PlanFree, Concurrency: docket.DefaultConcurrency}
	if plan != nil {
		p.Plan = *plan
	}
	if in.Concurrency != nil {
		p.Concurrency = *in.Concurrency
	}
	if in.RateLimit != nil {
		p.RateLimit = *in.RateLimit
	}
	t, err := s.cfg.Store.TenantCreate(r.Context(), p)
	if err != nil {
		return err
	}
	if err := s.cfg.Queue.SetTenantLimit(r.Context(), t.ID, watchedQueue, t.Concurrency); err != nil {
		return fmt.Errorf("tenant %s: set concurrency: %w", t.ID, err)
	}
	plain, key, err := s.newAPIKey(r.Context(), t.ID, "initial")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]any{"tenant": tenantView(t), "api_key": plain, "key": apiKeyView(key)})
}

// newAPIKey generates a key for a tenant and stores its hash.
func (s *Server) newAPIKey(ctx context.Context, tenantID, name string) (string, *docket.APIKey, error) {
	k, err := apikey.Generate()
	if err != nil {
		return "", nil, fmt.Errorf("generate API key: %w", err)
	}
	key := &docket.APIKey{ID: k.ID, TenantID: tenantID, Hash: k.Hash, Name: name}
	if err := s.cfg.Store.APIKeyInsert(ctx, key); err != nil {
		return "", nil, fmt.Errorf("tenant %s: store API key: %w", tenantID, err)
	}
	if key.CreatedAt.IsZero() { // a store that does not report it
		if stored, err := s.cfg.Store.APIKeyGet(ctx, k.ID); err == nil {
			key = stored
		}
	}
	return k.Plain, key, nil
}

// newTenantID returns a random (version 4) UUID.
func newTenantID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *Server) adminTenantList(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.cfg.Store.TenantList(r.Context())
	if err != nil {
		return err
	}
	out := make([]TenantView, len(ts))
	for i, t := range ts {
		out[i] = tenantView(t)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenants": out})
}

// adminTenantGet shows a tenant with its keys (ids and dates, never keys).
func (s *Server) adminTenantGet(w http.ResponseWriter, r *http.Request) error {
	t, err := s.cfg.Store.TenantGet(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	keys, err := s.cfg.Store.APIKeyList(r.Context(), t.ID)
	if err != nil {
		return err
	}
	kv := make([]APIKeyView, len(keys))
	for i, k := range keys {
		kv[i] = apiKeyView(k)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": tenantView(t), "keys": kv})
}

// adminTenantUpdate changes a tenant's name, plan, concurrency or rate
// limit; a new concurrency becomes the tenant's queue limit at once.
func (s *Server) adminTenantUpdate(w http.ResponseWriter, r *http.Request) error {
	var in tenantInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in == (tenantInput{}) {
		return errorf(http.StatusBadRequest, "nothing to change: send name, plan, concurrency or rate_limit")
	}
	plan, err := in.validate()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	t, err := s.cfg.Store.TenantUpdate(r.Context(), &docket.TenantUpdateParams{
		ID: id, Name: in.Name, Plan: plan, Concurrency: in.Concurrency, RateLimit: in.RateLimit,
	})
	if err != nil {
		return err
	}
	if in.Concurrency != nil {
		if err := s.cfg.Queue.SetTenantLimit(r.Context(), t.ID, watchedQueue, t.Concurrency); err != nil {
			return fmt.Errorf("tenant %s: set concurrency: %w", t.ID, err)
		}
	}
	s.keys.forget(t.ID) // cached keys carry the old tenant (plan, rate limit)
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": tenantView(t)})
}

// adminKeyCreate issues another key for a tenant: 201 {api_key, key}.
func (s *Server) adminKeyCreate(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
	}
	t, err := s.cfg.Store.TenantGet(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	plain, key, err := s.newAPIKey(r.Context(), t.ID, in.Name)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]any{"api_key": plain, "key": apiKeyView(key)})
}

// adminKeyRevoke revokes a key of a tenant (204). This server forgets it
// at once; other servers within their AuthCacheTTL.
func (s *Server) adminKeyRevoke(w http.ResponseWriter, r *http.Request) error {
	tenantID := r.PathValue("id")
	if err := s.cfg.Store.APIKeyRevoke(r.Context(), tenantID, r.PathValue("key_id")); err != nil {
		return err
	}
	s.keys.forget(tenantID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
