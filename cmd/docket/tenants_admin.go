package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// The admin API's bodies, which --json prints.
type (
	tenantInput struct {
		Name        string `json:"name"`
		Plan        string `json:"plan"`
		Concurrency int    `json:"concurrency"`
		RateLimit   int    `json:"rate_limit"`
		Weight      int    `json:"weight"`
	}
	tenantCreated struct {
		Tenant httpapi.TenantView `json:"tenant"`
		APIKey string             `json:"api_key"`
		Key    httpapi.APIKeyView `json:"key"`
	}
	keyIssued struct {
		APIKey string             `json:"api_key"`
		Key    httpapi.APIKeyView `json:"key"`
	}
)

// tenantAdmin manages tenants and keys: in the database, or through a
// server's admin API.
type tenantAdmin interface {
	create(ctx context.Context, in *tenantInput) (*tenantCreated, error)
	// list returns every tenant, oldest first, reading pageSize at a time.
	list(ctx context.Context, pageSize int) ([]httpapi.TenantView, error)
	get(ctx context.Context, id string) (*tenantDetail, error)
	update(ctx context.Context, id string, p *tenantPatch) (*httpapi.TenantView, error)
	issueKey(ctx context.Context, tenantID, name string) (*keyIssued, error)
	revokeKey(ctx context.Context, tenantID, keyID string) error
	// tenantID returns the id of the tenant of an id or, failing that, a
	// unique name; else ref itself, for the command to refuse.
	tenantID(ctx context.Context, ref string) (string, error)
	Close() error
}

var (
	_ tenantAdmin = (*storeAdmin)(nil)
	_ tenantAdmin = (*remoteAdmin)(nil)
)

// storeAdmin manages tenants in the database. A server running on the
// same database sees a changed plan or rate limit, and a revoked key,
// within its auth cache's TTL.
type storeAdmin struct {
	driver driver.Driver
	store  docket.Store
	client *queue.Client
}

func newStoreAdmin(d driver.Driver) (*storeAdmin, error) {
	store, ok := documents(d)
	if !ok {
		_ = d.Close()
		return nil, errors.New("the store does not keep tenants")
	}
	return &storeAdmin{driver: d, store: store, client: queue.NewClient(d, queue.ClientConfig{})}, nil
}

func (a *storeAdmin) create(ctx context.Context, in *tenantInput) (*tenantCreated, error) {
	t, k, err := docket.Provision(ctx, a.store, a.client, docket.TenantCreateParams{
		Name: in.Name, Plan: docket.Plan(in.Plan), Concurrency: in.Concurrency, RateLimit: in.RateLimit, Weight: in.Weight,
	})
	if err != nil {
		return nil, err
	}
	key, err := a.store.APIKeyGet(ctx, k.ID)
	if err != nil {
		return nil, err
	}
	return &tenantCreated{Tenant: httpapi.NewTenantView(t), APIKey: k.Plain, Key: httpapi.NewAPIKeyView(key)}, nil
}

func (a *storeAdmin) list(ctx context.Context, pageSize int) ([]httpapi.TenantView, error) {
	var out []httpapi.TenantView
	p := &docket.TenantListParams{Limit: pageSize}
	for {
		ts, err := a.store.TenantList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out = append(out, httpapi.NewTenantView(t))
		}
		if len(ts) < pageSize {
			return out, nil
		}
		p.After = ts[len(ts)-1].ID
	}
}

func (a *storeAdmin) get(ctx context.Context, id string) (*tenantDetail, error) {
	t, err := a.store.TenantGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", id, err)
	}
	keys, err := a.store.APIKeyList(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &tenantDetail{Tenant: httpapi.NewTenantView(t), Keys: make([]httpapi.APIKeyView, len(keys))}
	for i, k := range keys {
		d.Keys[i] = httpapi.NewAPIKeyView(k)
	}
	return d, nil
}

// update changes the tenant and, with its concurrency, its queue limit,
// and with its plan or weight, its weight in the queue, as PATCH
// /v1/admin/tenants/{id} does.
func (a *storeAdmin) update(ctx context.Context, id string, p *tenantPatch) (*httpapi.TenantView, error) {
	params := &docket.TenantUpdateParams{ID: id, Name: p.Name, Concurrency: p.Concurrency, RateLimit: p.RateLimit, Weight: p.Weight}
	if p.Plan != nil {
		plan := docket.Plan(*p.Plan)
		params.Plan = &plan
	}
	t, err := a.store.TenantUpdate(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", id, err)
	}
	if p.Concurrency != nil {
		if err := a.client.SetTenantLimit(ctx, t.ID, docket.DocumentQueue, t.Concurrency); err != nil {
			return nil, fmt.Errorf("tenant %s: set concurrency: %w", t.ID, err)
		}
	}
	if p.Plan != nil || p.Weight != nil {
		if err := a.client.SetTenantWeight(ctx, t.ID, t.EffectiveWeight()); err != nil {
			return nil, fmt.Errorf("tenant %s: set weight: %w", t.ID, err)
		}
	}
	v := httpapi.NewTenantView(t)
	return &v, nil
}

func (a *storeAdmin) issueKey(ctx context.Context, tenantID, name string) (*keyIssued, error) {
	if _, err := a.store.TenantGet(ctx, tenantID); err != nil {
		return nil, fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	k, err := docket.IssueKey(ctx, a.store, tenantID, name)
	if err != nil {
		return nil, err
	}
	key, err := a.store.APIKeyGet(ctx, k.ID)
	if err != nil {
		return nil, err
	}
	return &keyIssued{APIKey: k.Plain, Key: httpapi.NewAPIKeyView(key)}, nil
}

func (a *storeAdmin) revokeKey(ctx context.Context, tenantID, keyID string) error {
	if err := a.store.APIKeyRevoke(ctx, tenantID, keyID); err != nil {
		return fmt.Errorf("tenant %s, key %s: %w", tenantID, keyID, err)
	}
	return nil
}

func (a *storeAdmin) tenantID(ctx context.Context, ref string) (string, error) {
	return storeTenantID(ctx, a.store, ref)
}

func (a *storeAdmin) Close() error { return a.driver.Close() }

// remoteAdmin manages tenants through a server's admin API.
type remoteAdmin struct {
	c *adminClient
}

func (a *remoteAdmin) create(ctx context.Context, in *tenantInput) (*tenantCreated, error) {
	var out tenantCreated
	if err := a.c.do(ctx, "POST", "/v1/admin/tenants", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// list follows next_cursor to the last page.
func (a *remoteAdmin) list(ctx context.Context, pageSize int) ([]httpapi.TenantView, error) {
	var all []httpapi.TenantView
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	for {
		var page struct {
			Tenants    []httpapi.TenantView `json:"tenants"`
			NextCursor *string              `json:"next_cursor"`
		}
		if err := a.c.do(ctx, "GET", "/v1/admin/tenants?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Tenants...)
		if page.NextCursor == nil || *page.NextCursor == q.Get("cursor") {
			return all, nil
		}
		q.Set("cursor", *page.NextCursor)
	}
}

func (a *remoteAdmin) get(ctx context.Context, id string) (*tenantDetail, error) {
	var out tenantDetail
	if err := a.c.do(ctx, "GET", "/v1/admin/tenants/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (a *remoteAdmin) update(ctx context.Context, id string, p *tenantPatch) (*httpapi.TenantView, error) {
	var out struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	if err := a.c.do(ctx, "PATCH", "/v1/admin/tenants/"+url.PathEscape(id), p, &out); err != nil {
		return nil, err
	}
	return &out.Tenant, nil
}

func (a *remoteAdmin) issueKey(ctx context.Context, tenantID, name string) (*keyIssued, error) {
	var out keyIssued
	path := "/v1/admin/tenants/" + url.PathEscape(tenantID) + "/keys"
	if err := a.c.do(ctx, "POST", path, map[string]string{"name": name}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (a *remoteAdmin) revokeKey(ctx context.Context, tenantID, keyID string) error {
	path := "/v1/admin/tenants/" + url.PathEscape(tenantID) + "/keys/" + url.PathEscape(keyID)
	return a.c.do(ctx, "DELETE", path, nil, nil)
}

func (a *remoteAdmin) tenantID(ctx context.Context, ref string) (string, error) {
	return a.c.tenantID(ctx, ref)
}

func (a *remoteAdmin) Close() error { return nil }
