package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/docketq/docket"
)

const (
	tenantColumns   = `id, name, plan, concurrency, rate_limit, weight, created_at, updated_at`
	tenantInsertSQL = `INSERT INTO docket_tenants (` + tenantColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	tenantGetSQL    = `SELECT ` + tenantColumns + ` FROM docket_tenants WHERE id = ? AND ` + tenantLive
	// tenantListSQL lists the tenants after a cursor (its created_at and
	// id; from the oldest: the least integer and ''), at most LIMIT (-1:
	// all): one range scan of docket_tenants_list (migrations/003_tenant_list.sql).
	tenantListSQL = `SELECT ` + tenantColumns + ` FROM docket_tenants
WHERE (created_at, id) > (?, ?) AND ` + tenantLive + ` ORDER BY created_at, id LIMIT ?`
	tenantCursorSQL = `SELECT created_at FROM docket_tenants WHERE id = ?`
	// tenantByNameSQL reads the live tenant of a name (unique).
	tenantByNameSQL = `SELECT ` + tenantColumns + ` FROM docket_tenants WHERE name = ? AND ` + tenantLive
	tenantUpdateSQL = `UPDATE docket_tenants SET name = ?, plan = ?, concurrency = ?, rate_limit = ?, weight = ?, updated_at = ?
WHERE id = ?`
)

// TenantCreate stores a new tenant. An empty plan is the free plan.
func (s *Store) TenantCreate(ctx context.Context, p *docket.TenantCreateParams) (*docket.Tenant, error) {
	now := s.d.Now()
	t := &docket.Tenant{
		ID: p.ID, Name: p.Name, Plan: p.Plan, Concurrency: p.Concurrency, RateLimit: p.RateLimit, Weight: p.Weight,
		CreatedAt: fromMicros(now.UnixMicro()), UpdatedAt: fromMicros(now.UnixMicro()),
	}
	if t.Plan == "" {
		t.Plan = docket.PlanFree
	}
	if t.Concurrency == 0 {
		t.Concurrency = docket.DefaultConcurrency
	}
	if err := docket.ValidateTenant(t); err != nil {
		return nil, fmt.Errorf("create tenant: %w", err)
	}
	_, err := s.writeExec(ctx, tenantInsertSQL, t.ID, t.Name, string(t.Plan),
		t.Concurrency, t.RateLimit, t.Weight, toMicros(t.CreatedAt), toMicros(t.UpdatedAt))
	if err != nil {
		return nil, fmt.Errorf("create tenant %q: %w", t.ID, docsError(err))
	}
	return t, nil
}

// TenantGet returns a tenant, or ErrNotFound.
func (s *Store) TenantGet(ctx context.Context, id string) (*docket.Tenant, error) {
	t, err := scanTenant(s.reader.QueryRowContext(ctx, tenantGetSQL, id))
	if err != nil {
		return nil, fmt.Errorf("get tenant %q: %w", id, docsError(err))
	}
	return t, nil
}

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
	after := int64(math.MinInt64) // from the oldest
	if p.After != "" && p.Name == "" {
		if err := s.reader.QueryRowContext(ctx, tenantCursorSQL, p.After).Scan(&after); err != nil {
			return nil, fmt.Errorf("list tenants: cursor %q: %w", p.After, docsError(err))
		}
	}
	limit := p.Limit
	if limit == 0 {
		limit = -1 // all
	}
	query, args := tenantListSQL, []any{after, p.After, limit}
	if p.Name != "" {
		query, args = tenantByNameSQL, []any{p.Name}
	}
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", docsError(err))
	}
	defer rows.Close()
	var out []*docket.Tenant
	for rows.Next() {
		t, err := scanTenant(rows)
		if err != nil {
			return nil, fmt.Errorf("list tenants: %w", docsError(err))
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tenants: %w", docsError(err))
	}
	return out, nil
}

// TenantUpdate changes a tenant in one write transaction: read, apply,
// write.
func (s *Store) TenantUpdate(ctx context.Context, p *docket.TenantUpdateParams) (*docket.Tenant, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("update tenant %q: %w", p.ID, err)
	}
	var t *docket.Tenant
	err := s.docsWrite(ctx, func(tx *sql.Tx, now int64) error {
		var err error
		if t, err = scanTenant(tx.QueryRowContext(ctx, tenantGetSQL, p.ID)); err != nil {
			return err
		}
		applyTenantUpdate(t, p)
		t.UpdatedAt = fromMicros(now)
		_, err = tx.ExecContext(ctx, tenantUpdateSQL, t.Name, string(t.Plan), t.Concurrency, t.RateLimit, t.Weight, now, t.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update tenant %q: %w", p.ID, docsError(err))
	}
	return t, nil
}

func applyTenantUpdate(t *docket.Tenant, p *docket.TenantUpdateParams) {
	if p.Name != nil {
		t.Name = *p.Name
	}
	if p.Plan != nil {
		t.Plan = *p.Plan
	}
	if p.Concurrency != nil {
		t.Concurrency = *p.Concurrency
	}
	if p.RateLimit != nil {
		t.RateLimit = *p.RateLimit
	}
	if p.Weight != nil {
		t.Weight = *p.Weight
	}
}

func scanTenant(s scanner) (*docket.Tenant, error) {
	var (
		t                docket.Tenant
		plan             string
		created, updated int64
	)
	if err := s.Scan(&t.ID, &t.Name, &plan, &t.Concurrency, &t.RateLimit, &t.Weight, &created, &updated); err != nil {
		return nil, err
	}
	t.Plan = docket.Plan(plan)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &t, nil
}
