package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// Tenants and API keys are system scope: their methods run on the pool as
// the owner, without a tenant.

const tenantColumns = `id, name, plan, concurrency, rate_limit, weight, created_at, updated_at`

const tenantInsertSQL = `INSERT INTO docket_tenants (id, name, plan, concurrency, rate_limit, weight)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING ` + tenantColumns

// tenantUpdateSQL changes the fields whose parameter is not NULL.
const tenantUpdateSQL = `UPDATE docket_tenants SET
    name = coalesce($2, name), plan = coalesce($3, plan),
    concurrency = coalesce($4, concurrency), rate_limit = coalesce($5, rate_limit),
    weight = coalesce($6, weight),
    updated_at = clock_timestamp()
WHERE id = $1 AND ` + tenantLive + ` RETURNING ` + tenantColumns

// TenantCreate stores a new tenant. An empty plan is the free plan.
func (s *Store) TenantCreate(ctx context.Context, params *docket.TenantCreateParams) (*docket.Tenant, error) {
	t := &docket.Tenant{ID: params.ID, Name: params.Name, Plan: params.Plan,
		Concurrency: params.Concurrency, RateLimit: params.RateLimit, Weight: params.Weight}
	if t.Plan == "" {
		t.Plan = docket.PlanFree
	}
	if t.Concurrency == 0 {
		t.Concurrency = docket.DefaultConcurrency
	}
	if err := docket.ValidateTenant(t); err != nil {
		return nil, fmt.Errorf("create tenant: %w", err)
	}
	t, err := scanTenant(s.pool.QueryRow(ctx, tenantInsertSQL, t.ID, t.Name, string(t.Plan), t.Concurrency, t.RateLimit, t.Weight))
	if err != nil {
		return nil, fmt.Errorf("create tenant %q: %w", params.ID, docsError(err))
	}
	return t, nil
}

// TenantGet returns a tenant, or ErrNotFound.
func (s *Store) TenantGet(ctx context.Context, id string) (*docket.Tenant, error) {
	t, err := scanTenant(s.pool.QueryRow(ctx, `SELECT `+tenantColumns+` FROM docket_tenants WHERE id = $1 AND `+tenantLive, id))
	if err != nil {
		return nil, fmt.Errorf("get tenant %q: %w", id, docsError(err))
	}
	return t, nil
}

// tenantListSQL lists the tenants after a cursor ($1, $2: its created_at
// and id; from the oldest: the zero time and ”), at most $3 (NULL: all):
// one range scan of docket_tenants_list (migrations/005_tenant_list.sql).
const tenantListSQL = `SELECT ` + tenantColumns + ` FROM docket_tenants
WHERE (created_at, id) > ($1::timestamptz, $2::text) AND ` + tenantLive + `
ORDER BY created_at, id LIMIT $3`

// tenantByNameSQL reads the live tenant of a name (unique).
const tenantByNameSQL = `SELECT ` + tenantColumns + ` FROM docket_tenants WHERE name = $1 AND ` + tenantLive

// tenantCursorSQL reads where a cursor stands in the listing.
const tenantCursorSQL = `SELECT created_at FROM docket_tenants WHERE id = $1`

// TenantList returns tenants, oldest first: a page of them after
// params.After, or every one. An unknown cursor is ErrNotFound.
func (s *Store) TenantList(ctx context.Context, params *docket.TenantListParams) ([]*docket.Tenant, error) {
	var p docket.TenantListParams
	if params != nil {
		p = *params
	}
	if p.Limit < 0 {
		return nil, fmt.Errorf("list tenants: %w: limit %d is negative", docket.ErrInvalid, p.Limit)
	}
	var (
		after time.Time // the zero time: from the oldest
		limit any       // NULL: all
	)
	if p.Name != "" {
		rows, err := s.pool.Query(ctx, tenantByNameSQL, p.Name)
		if err != nil {
			return nil, fmt.Errorf("list tenants: %w", docsError(err))
		}
		tenants, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*docket.Tenant, error) { return scanTenant(r) })
		if err != nil {
			return nil, fmt.Errorf("list tenants: %w", docsError(err))
		}
		return tenants, nil
	}
	if p.After != "" {
		if err := s.pool.QueryRow(ctx, tenantCursorSQL, p.After).Scan(&after); err != nil {
			return nil, fmt.Errorf("list tenants: cursor %q: %w", p.After, docsError(err))
		}
	}
	if p.Limit > 0 {
		limit = p.Limit
	}
	rows, err := s.pool.Query(ctx, tenantListSQL, after, p.After, limit)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", docsError(err))
	}
	tenants, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*docket.Tenant, error) { return scanTenant(r) })
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", docsError(err))
	}
	return tenants, nil
}

// TenantUpdate changes a tenant and returns it, or ErrNotFound.
func (s *Store) TenantUpdate(ctx context.Context, params *docket.TenantUpdateParams) (*docket.Tenant, error) {
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("update tenant %q: %w", params.ID, err)
	}
	var plan *string
	if params.Plan != nil {
		s := string(*params.Plan)
		plan = &s
	}
	t, err := scanTenant(s.pool.QueryRow(ctx, tenantUpdateSQL, params.ID, params.Name, plan,
		params.Concurrency, params.RateLimit, params.Weight))
	if err != nil {
		return nil, fmt.Errorf("update tenant %q: %w", params.ID, docsError(err))
	}
	return t, nil
}

func scanTenant(row pgx.Row) (*docket.Tenant, error) {
	var t docket.Tenant
	var plan string
	if err := row.Scan(&t.ID, &t.Name, &plan, &t.Concurrency, &t.RateLimit, &t.Weight, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	t.Plan = docket.Plan(plan)
	return &t, nil
}
