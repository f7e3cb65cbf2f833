package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

var (
	_ tenantAdmin = (*storeAdmin)(nil)
	_ tenantAdmin = (*remoteAdmin)(nil)
)

// storeAdmin manages tenants in the database.
type storeAdmin struct {
	driver queue.Driver
	store  docket.Store
	client *queue.Client
}

func newStoreAdmin(d queue.Driver) (*storeAdmin, error) {
	store, ok := d.(docket.Store)
	if !ok {
		_ = d.Close()
		return nil, errors.New("the store does not keep tenants")
	}
	return &storeAdmin{driver: d, store: store, client: queue.NewClient(d, queue.ClientConfig{})}, nil
}

func (a *storeAdmin) create(ctx context.Context, in *tenantInput) (*tenantCreated, error) {
	t, k, err := docket.Provision(ctx, a.store, a.client, docket.TenantCreateParams{
		Name: in.Name, Plan: docket.Plan(in.Plan), Concurrency: in.Concurrency, RateLimit: in.RateLimit,
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

func (a *storeAdmin) list(ctx context.Context) ([]httpapi.TenantView, error) {
	ts, err := a.store.TenantList(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]httpapi.TenantView, len(ts))
	for i, t := range ts {
		out[i] = httpapi.NewTenantView(t)
	}
	return out, nil
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

func (a *remoteAdmin) list(ctx context.Context) ([]httpapi.TenantView, error) {
	var out struct {
		Tenants []httpapi.TenantView `json:"tenants"`
	}
	if err := a.c.do(ctx, "GET", "/v1/admin/tenants", nil, &out); err != nil {
		return nil, err
	}
	return out.Tenants, nil
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

func (a *remoteAdmin) Close() error { return nil }
