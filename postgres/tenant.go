package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// settingsLockSQL takes the settings lock exclusively for the rest of the
// transaction: every change of a tenant's pause or limit, or of a queue's
// default limit, holds it to its commit, and the trigger that fills in a
// new claim row's pause and limit takes it shared (migration 019). A
// change thus waits for the inserts creating claim rows to commit and
// then sees their rows, and a row created after the change took the lock
// reads the new setting. It also serialises the changes, so each one's
// refresh reads what the previous one committed.
const settingsLockSQL = `SELECT pg_advisory_xact_lock(1684763763, 0)`

// refreshLimitsSQL recomputes, after a change, max_running of the claim
// rows the condition where selects from docket_tenant_limit. It locks them
// in key order, as every statement that locks several tenant rows does
// (tenant_lock.go): a bare UPDATE locked them in the order it found them,
// and deadlocked with a rescue that locks them in key order.
func refreshLimitsSQL(where string) string {
	return `
WITH locked AS (
    SELECT queue, tenant_id FROM docket_tenant_queues
    WHERE ` + where + ` AND max_running IS DISTINCT FROM docket_tenant_limit(queue, tenant_id)
    ORDER BY queue, tenant_id
    FOR NO KEY UPDATE
)
UPDATE docket_tenant_queues t SET max_running = docket_tenant_limit(t.queue, t.tenant_id)
FROM locked l WHERE t.queue = l.queue AND t.tenant_id = l.tenant_id`
}

var (
	// refreshTenantLimitsSQL: $1 tenant, $2 queue or '' for all.
	refreshTenantLimitsSQL = refreshLimitsSQL(`tenant_id = $1 AND ($2 = '' OR queue = $2)`)
	// refreshQueueLimitsSQL: $1 queue.
	refreshQueueLimitsSQL = refreshLimitsSQL(`queue = $1`)
)

// settingsTx runs fn in a transaction holding the settings lock (see
// settingsLockSQL), run again after a deadlock when it is a transaction
// of its own.
func (e *Executor) settingsTx(ctx context.Context, fn func(x *Executor) error) error {
	return e.retryDeadlock(ctx, func() error {
		return e.inTx(ctx, func(x *Executor) error {
			if _, err := x.db.Exec(ctx, settingsLockSQL); err != nil {
				return err
			}
			return fn(x)
		})
	})
}

// TenantLimitSet sets or (MaxRunning 0) removes a tenant's limit override
// and applies it to the tenant's claim rows at once.
func (e *Executor) TenantLimitSet(ctx context.Context, params *driver.TenantLimitParams) error {
	if params.TenantID == "" {
		return fmt.Errorf("%w: tenant limit needs a tenant", driver.ErrInvalid)
	}
	if err := driver.ValidateLimit("tenant limit", params.MaxRunning, 0); err != nil {
		return err
	}
	if params.Queue != "" {
		if err := driver.ValidateQueueName(params.Queue); err != nil {
			return err
		}
	}
	err := e.settingsTx(ctx, func(x *Executor) error {
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
		_, err = x.db.Exec(ctx, refreshTenantLimitsSQL, params.TenantID, params.Queue)
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
	if err := driver.ValidateLimit("default tenant limit", params.DefaultTenantLimit, 1); err != nil {
		return err
	}
	err := e.settingsTx(ctx, func(x *Executor) error {
		_, err := x.db.Exec(ctx, `
INSERT INTO docket_queues (name, default_tenant_limit) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET default_tenant_limit = excluded.default_tenant_limit, updated_at = now()`,
			params.Queue, params.DefaultTenantLimit)
		if err != nil {
			return err
		}
		_, err = x.db.Exec(ctx, refreshQueueLimitsSQL, params.Queue)
		return err
	})
	if err != nil {
		return fmt.Errorf("configure queue %s: %w", params.Queue, interpretError(err))
	}
	return nil
}
