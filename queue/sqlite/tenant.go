package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

const (
	setTenantLimitSQL = `
INSERT INTO docket_tenant_limits (tenant_id, queue, max_running) VALUES (?, ?, ?)
ON CONFLICT (tenant_id, queue) DO UPDATE SET max_running = excluded.max_running`
	deleteTenantLimitSQL = `DELETE FROM docket_tenant_limits WHERE tenant_id = ? AND queue = ?`
	setQueueConfigSQL    = `
INSERT INTO docket_queues (queue, default_tenant_limit) VALUES (?, ?)
ON CONFLICT (queue) DO UPDATE SET default_tenant_limit = excluded.default_tenant_limit`
)

// refreshLimitsSQL recomputes the limit cached in the slot rows; the
// conditions are appended by the caller.
var refreshLimitsSQL = `UPDATE docket_tenant_queues SET max_running = ` +
	limitSQL("docket_tenant_queues.tenant_id", "docket_tenant_queues.queue") + ` WHERE `

// TenantLimitSet sets or (with MaxRunning 0) removes a tenant's override,
// and applies it to the tenant's slots at once.
func (e *executor) TenantLimitSet(ctx context.Context, p *driver.TenantLimitParams) error {
	if p.TenantID == "" {
		return fmt.Errorf("set tenant limit: %w: tenant is required", driver.ErrInvalid)
	}
	if err := driver.ValidateLimit("tenant limit", p.MaxRunning, 0); err != nil {
		return fmt.Errorf("set tenant limit: %w", err)
	}
	err := e.write(ctx, func(t *txn) error {
		var err error
		if p.MaxRunning == 0 {
			_, err = t.exec(ctx, deleteTenantLimitSQL, p.TenantID, p.Queue)
		} else {
			_, err = t.exec(ctx, setTenantLimitSQL, p.TenantID, p.Queue, p.MaxRunning)
		}
		if err != nil {
			return err
		}
		if p.Queue == "" {
			_, err = t.exec(ctx, refreshLimitsSQL+`tenant_id = ?`, p.TenantID)
		} else {
			_, err = t.exec(ctx, refreshLimitsSQL+`queue = ? AND tenant_id = ?`, p.Queue, p.TenantID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant %s limit: %w", p.TenantID, err)
	}
	return nil
}

// QueueConfigSet sets a queue's default tenant limit and applies it to the
// queue's slots at once.
func (e *executor) QueueConfigSet(ctx context.Context, p *driver.QueueConfigParams) error {
	if p.Queue == "" {
		return fmt.Errorf("configure queue: %w: queue is required", driver.ErrInvalid)
	}
	if err := driver.ValidateLimit("default tenant limit", p.DefaultTenantLimit, 1); err != nil {
		return fmt.Errorf("configure queue %s: %w", p.Queue, err)
	}
	err := e.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, setQueueConfigSQL, p.Queue, p.DefaultTenantLimit); err != nil {
			return err
		}
		_, err := t.exec(ctx, refreshLimitsSQL+`queue = ?`, p.Queue)
		return err
	})
	if err != nil {
		return fmt.Errorf("configure queue %s: %w", p.Queue, err)
	}
	return nil
}

// TenantWeightSet sets or (with Weight 0) removes a tenant's weight, and
// applies it to the tenant's slots at once.
func (e *executor) TenantWeightSet(ctx context.Context, p *driver.TenantWeightParams) error {
	if p.TenantID == "" {
		return fmt.Errorf("set tenant weight: %w: tenant is required", driver.ErrInvalid)
	}
	if err := driver.ValidateLimit("tenant weight", p.Weight, 0); err != nil {
		return fmt.Errorf("set tenant weight: %w", err)
	}
	err := e.write(ctx, func(t *txn) error {
		var err error
		if p.Weight == 0 {
			_, err = t.exec(ctx, `DELETE FROM docket_tenant_weights WHERE tenant_id = ?`, p.TenantID)
		} else {
			_, err = t.exec(ctx, `INSERT INTO docket_tenant_weights (tenant_id, weight) VALUES (?1, ?2)
ON CONFLICT (tenant_id) DO UPDATE SET weight = excluded.weight`, p.TenantID, p.Weight)
		}
		if err != nil {
			return err
		}
		_, err = t.exec(ctx, `UPDATE docket_tenant_queues SET weight = ? WHERE tenant_id = ?`, max(p.Weight, 1), p.TenantID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant %s weight: %w", p.TenantID, err)
	}
	return nil
}
