package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/docketq/docket"
)

// adminTenantCreate creates a tenant with its first API key, its queue
// concurrency limit and its weight: 201 {tenant, api_key, key}. The key
// is shown only here.
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
	p := docket.TenantCreateParams{Name: *in.Name}
	if plan != nil {
		p.Plan = *plan
	}
	if in.Concurrency != nil {
		p.Concurrency = *in.Concurrency
	}
	if in.RateLimit != nil {
		p.RateLimit = *in.RateLimit
	}
	if in.Weight != nil {
		p.Weight = *in.Weight
	}
	t, k, err := docket.Provision(r.Context(), s.cfg.Store, s.cfg.Queue, p)
	if err != nil {
		return err
	}
	key, err := s.cfg.Store.APIKeyGet(r.Context(), k.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]any{"tenant": tenantView(t), "api_key": k.Plain, "key": apiKeyView(key)})
}

// newAPIKey issues a key for a tenant and returns it with its stored form.
func (s *Server) newAPIKey(ctx context.Context, tenantID, name string) (string, *docket.APIKey, error) {
	k, err := docket.IssueKey(ctx, s.cfg.Store, tenantID, name)
	if err != nil {
		return "", nil, fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	key, err := s.cfg.Store.APIKeyGet(ctx, k.ID)
	if err != nil {
		return "", nil, err
	}
	return k.Plain, key, nil
}

// tenantList is the body of GET /v1/admin/tenants.
type tenantList struct {
	Tenants    []TenantView `json:"tenants"`
	NextCursor *string      `json:"next_cursor"`
}

// adminTenantList serves GET /v1/admin/tenants?limit=&cursor=: a page of
// tenants, oldest first (limit 1-500, default 50); next_cursor, when not
// null, reads the next page. With name=, the tenant of that name only
// (none or one): how the CLI finds a tenant given by its name.
func (s *Server) adminTenantList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := limitParam(q.Get("limit"))
	if err != nil {
		return err
	}
	cursor := q.Get("cursor")
	if name := q.Get("name"); name != "" {
		// The tenant of a name (unique): none or one, in one page.
		ts, err := s.cfg.Store.TenantList(r.Context(), &docket.TenantListParams{Name: name})
		if err != nil {
			return err
		}
		return s.writeTenantList(r.Context(), w, ts, nil)
	}
	ts, err := s.cfg.Store.TenantList(r.Context(), &docket.TenantListParams{After: cursor, Limit: limit + 1})
	if cursor != "" && errors.Is(err, docket.ErrNotFound) {
		return errorf(http.StatusBadRequest, "invalid cursor")
	}
	if err != nil {
		return err
	}
	var next *string
	if len(ts) > limit {
		ts = ts[:limit]
		next = &ts[limit-1].ID
	}
	return s.writeTenantList(r.Context(), w, ts, next)
}

// writeTenantList answers a page of tenants, marked paused or not.
func (s *Server) writeTenantList(ctx context.Context, w http.ResponseWriter, ts []*docket.Tenant, next *string) error {
	out := tenantList{Tenants: make([]TenantView, 0, len(ts)), NextCursor: next}
	for _, t := range ts {
		out.Tenants = append(out.Tenants, tenantView(t))
	}
	views := make([]*TenantView, len(out.Tenants))
	for i := range out.Tenants {
		views[i] = &out.Tenants[i]
	}
	if err := s.markTenantsPaused(ctx, views...); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
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
	tv := tenantView(t)
	if err := s.markTenantsPaused(r.Context(), &tv); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": tv, "keys": kv})
}

// adminTenantUpdate changes a tenant's name, plan, concurrency, rate limit
// or weight; a new concurrency becomes the tenant's queue limit at once,
// and a new plan or weight its weight in the queue (Tenant.EffectiveWeight:
// a plan change keeps an override, weight 0 falls back to the plan's).
func (s *Server) adminTenantUpdate(w http.ResponseWriter, r *http.Request) error {
	var in tenantInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in == (tenantInput{}) {
		return errorf(http.StatusBadRequest, "nothing to change: send name, plan, concurrency, rate_limit or weight")
	}
	plan, err := in.validate()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	t, err := s.cfg.Store.TenantUpdate(r.Context(), &docket.TenantUpdateParams{
		ID: id, Name: in.Name, Plan: plan, Concurrency: in.Concurrency, RateLimit: in.RateLimit, Weight: in.Weight,
	})
	if errors.Is(err, docket.ErrDuplicate) && in.Name != nil {
		return errorf(http.StatusConflict, "a tenant named %q already exists", *in.Name)
	}
	if err != nil {
		return err
	}
	if in.Concurrency != nil {
		if err := s.cfg.Queue.SetTenantLimit(r.Context(), t.ID, watchedQueue, t.Concurrency); err != nil {
			return fmt.Errorf("tenant %s: set concurrency: %w", t.ID, err)
		}
	}
	if plan != nil || in.Weight != nil {
		if err := s.cfg.Queue.SetTenantWeight(r.Context(), t.ID, t.EffectiveWeight()); err != nil {
			return fmt.Errorf("tenant %s: set weight: %w", t.ID, err)
		}
	}
	s.keys.forget(t.ID) // cached keys carry the old tenant (plan, rate limit)
	tv := tenantView(t)
	if err := s.markTenantsPaused(r.Context(), &tv); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": tv})
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
// and ends its event streams at once; other servers within their
// AuthCacheTTL and StreamAuthInterval.
func (s *Server) adminKeyRevoke(w http.ResponseWriter, r *http.Request) error {
	tenantID := r.PathValue("id")
	if err := s.cfg.Store.APIKeyRevoke(r.Context(), tenantID, r.PathValue("key_id")); err != nil {
		return err
	}
	s.keys.forget(tenantID)
	s.streams.endKey(r.PathValue("key_id"))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
