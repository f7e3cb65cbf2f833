package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// refreshLimitsSQL recomputes max_running of a tenant's rows ($1 tenant,
// $2 queue or ” for all) from docket_tenant_limit, after a change.
const refreshLimitsSQL = `
UPDATE docket_tenant_queues SET max_running = docket_tenant_limit(queue, tenant_id)
WHERE tenant_id = $1 AND ($2 = '' OR queue = $2)
  AND max_running IS DISTINCT FROM docket_tenant_limit(queue, tenant_id)`

// TenantLimitSet sets or (MaxRunning 0) removes a tenant's limit override
// and applies it to the tenant's claim rows at once.
func (e *Executor) TenantLimitSet(ctx context.Context, params *driver.TenantLimitParams) error {
	if params.TenantID == "" || params.MaxRunning < 0 {
		return fmt.Errorf("%w: tenant limit needs a tenant and MaxRunning >= 0", driver.ErrInvalid)
	}
	if params.Queue != "" {
		if err := driver.ValidateQueueName(params.Queue); err != nil {
			return err
		}
	}
	err := e.inTx(ctx, func(x *Executor) error {
		var err error
		if params.MaxRunning == 0 {
			_, err = x.db.Exec(ctx, `DELETE FROM docket_tenant_limits WHERE tenant_id = $1 AND queue = $2`,
				params.TenantID, params.Queue)
		} else {
			_, err = x.db.Exec(ctx, `
INSERT INTO docket_tenant_limits (tenant_id, queue, max_running) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, queue) DO UPDATE SET max_running = excluded.max_running`,
				params.TenantID, params.Queue, params.MaxRunning)
		}
		if err != nil {
			return err
		}
		_, err = x.db.Exec(ctx, refreshLimitsSQL, params.TenantID, params.Queue)
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant limit: %w", interpretError(err))
	}
	return nil
}

// QueueConfigSet sets a queue's default tenant limit and applies it to the
// claim rows of tenants without an override.
func (e *Executor) QueueConfigSet(ctx context.Context, params *driver.QueueConfigParams) error {
	if err := driver.ValidateQueueName(params.Queue); err != nil {
		return err
	}
	if params.DefaultTenantLimit < 1 {
		return fmt.Errorf("%w: default tenant limit %d must be at least 1", driver.ErrInvalid, params.DefaultTenantLimit)
	}
	err := e.inTx(ctx, func(x *Executor) error {
		_, err := x.db.Exec(ctx, `
INSERT INTO docket_queues (name, default_tenant_limit) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET default_tenant_limit = excluded.default_tenant_limit, updated_at = now()`,
			params.Queue, params.DefaultTenantLimit)
		if err != nil {
			return err
		}
		_, err = x.db.Exec(ctx, `
UPDATE docket_tenant_queues SET max_running = docket_tenant_limit(queue, tenant_id)
WHERE queue = $1 AND max_running IS DISTINCT FROM docket_tenant_limit(queue, tenant_id)`, params.Queue)
		return err
	})
	if err != nil {
		return fmt.Errorf("configure queue %s: %w", params.Queue, interpretError(err))
	}
	return nil
}
