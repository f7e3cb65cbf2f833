package docket

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/docketq/docket/apikey"
	"github.com/docketq/docket/queue"
)

// Provision creates a tenant with a first API key and sets its concurrency
// limit and its weight (Tenant.EffectiveWeight) in the document queue. It returns the tenant and the key, whose
// Plain form is shown once and never stored. p.ID may be empty (a new UUID).
func Provision(ctx context.Context, store Store, client *queue.Client, p TenantCreateParams) (*Tenant, apikey.Key, error) {
	generated := p.ID == ""
	if generated {
		p.ID = uuid.NewString()
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Plan == "" {
		p.Plan = PlanFree
	}
	if p.Concurrency == 0 {
		p.Concurrency = DefaultConcurrency
	}
	if err := ValidateTenant(&Tenant{ID: p.ID, Name: p.Name, Plan: p.Plan, Concurrency: p.Concurrency, RateLimit: p.RateLimit, Weight: p.Weight}); err != nil {
		return nil, apikey.Key{}, err
	}
	t, err := store.TenantCreate(ctx, &p)
	switch {
	case errors.Is(err, ErrDuplicate) && generated:
		// A new UUID is not taken: the name is. The store's own text
		// (a constraint's name) is not for users.
		return nil, apikey.Key{}, fmt.Errorf("a tenant named %q %w", p.Name, ErrDuplicate)
	case errors.Is(err, ErrDuplicate):
		return nil, apikey.Key{}, fmt.Errorf("a tenant named %q or with id %q %w", p.Name, p.ID, ErrDuplicate)
	case err != nil:
		return nil, apikey.Key{}, fmt.Errorf("create tenant: %w", err)
	}
	if err := client.SetTenantLimit(ctx, t.ID, DocumentQueue, t.Concurrency); err != nil {
		return nil, apikey.Key{}, fmt.Errorf("set tenant limit: %w", err)
	}
	if err := client.SetTenantWeight(ctx, t.ID, t.EffectiveWeight()); err != nil {
		return nil, apikey.Key{}, fmt.Errorf("set tenant weight: %w", err)
	}
	key, err := IssueKey(ctx, store, t.ID, "default")
	if err != nil {
		return nil, apikey.Key{}, err
	}
	return t, key, nil
}

// IssueKey generates a new API key for a tenant and stores its hash.
func IssueKey(ctx context.Context, store Store, tenantID, name string) (apikey.Key, error) {
	key, err := apikey.Generate()
	if err != nil {
		return apikey.Key{}, fmt.Errorf("generate key: %w", err)
	}
	if err := store.APIKeyInsert(ctx, &APIKey{ID: key.ID, TenantID: tenantID, Hash: key.Hash, Name: name}); err != nil {
		return apikey.Key{}, fmt.Errorf("store key: %w", err)
	}
	return key, nil
}
