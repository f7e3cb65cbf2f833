package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// The settings locks (advisory, to the transaction's end): a change of a
// tenant's pause or limit holds its tenant's exclusively, a change of a
// queue's default limit its queue's, and the trigger that fills in a new
// claim row's pause and limit takes both of the row's shared (migration
// 019). A change thus waits for the inserts creating claim rows of its
// tenant (queue) to commit and then sees their rows, and a row created
// after the change took its lock reads the new setting. Limit changes
// also take limitChangesLockSQL, so that each one's refresh reads what
// the previous one committed (a tenant's override and a queue's default
// both decide a row's limit). The keys are 32 buckets of the name's hash
// (repeatable/tenant_queues_settings.sql says why).
const (
	tenantSettingsLockSQL = `SELECT pg_advisory_xact_lock(1684763763, hashtext($1) & 31)`
	queueSettingsLockSQL  = `SELECT pg_advisory_xact_lock(1684763764, hashtext($1) & 31)`
	limitChangesLockSQL   = `SELECT pg_advisory_xact_lock(1684763765, 0)`
)

// settingsLockTimeout bounds each lock wait of a change, its settings
// locks included, and the change runs again (settingsTx) until
// settingsPatience has passed: in a cycle of waits with an application's
// transaction the change gives way, well before PostgreSQL's deadlock
// detector (1 s) could pick the application's transaction as its victim.
// Two such cycles: an application transaction that woke one of the
// tenant's rows and then creates another waits for the change's lock while
// the change waits for that row; and two changes and two applications
// creating rows across each other's tenants and queues.
const settingsLockTimeout = "200ms"

// settingsPatience is how long settingsTx keeps running a change again
// whose lock waits timed out: an application transaction that creates the
// tenant's claim rows holds its settings lock shared to its commit.
const settingsPatience = 30 * time.Second

// settingsLock is a statement that takes a settings lock, and its
// arguments.
type settingsLock struct {
	sql  string
	args []any
}

// settingsTx runs fn in a transaction holding the settings locks locks
// (see tenantSettingsLockSQL), every lock wait bounded by
// settingsLockTimeout, and runs it again while a wait timed out or
// deadlocked, for settingsPatience at most; then it returns ErrConflict.
// In a caller's transaction it only takes the locks: the timeout would
// last the rest of that transaction.
func (e *Executor) settingsTx(ctx context.Context, locks []settingsLock, fn func(x *Executor) error) error {
	deadline := time.Now().Add(settingsPatience)
	for i := 1; ; i++ {
		err := e.inTx(ctx, func(x *Executor) error {
			if e.tx == nil {
				if _, err := x.db.Exec(ctx, claimLockTimeoutSQL, settingsLockTimeout); err != nil {
					return err
				}
			}
			for _, l := range locks {
				if _, err := x.db.Exec(ctx, l.sql, l.args...); err != nil {
					return err
				}
			}
			return fn(x)
		})
		if err == nil || e.tx != nil || (!isDeadlock(err) && !isLockTimeout(err)) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: the tenant's claim rows or settings stayed locked for %s (an application transaction holds them): %w",
				driver.ErrConflict, settingsPatience, err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(min(i, 10)) * 20 * time.Millisecond):
		}
	}
}

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
	locks := []settingsLock{{limitChangesLockSQL, nil}, {tenantSettingsLockSQL, []any{params.TenantID}}}
	err := e.settingsTx(ctx, locks, func(x *Executor) error {
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
	locks := []settingsLock{{limitChangesLockSQL, nil}, {queueSettingsLockSQL, []any{params.Queue}}}
	err := e.settingsTx(ctx, locks, func(x *Executor) error {
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

// refreshTenantWeightsSQL applies a tenant's weight ($2) to its claim rows,
// locked in key order (see refreshLimitsSQL).
const refreshTenantWeightsSQL = `
WITH locked AS (
    SELECT queue, tenant_id FROM docket_tenant_queues
    WHERE tenant_id = $1 AND weight <> $2
    ORDER BY queue, tenant_id
    FOR NO KEY UPDATE
)
UPDATE docket_tenant_queues t SET weight = $2
FROM locked l WHERE t.queue = l.queue AND t.tenant_id = l.tenant_id`

// TenantWeightSet sets or (Weight 0) removes a tenant's weight and applies
// it to the tenant's claim rows at once, under the tenant's settings lock
// (the trigger that creates a claim row reads the weight under it too).
func (e *Executor) TenantWeightSet(ctx context.Context, params *driver.TenantWeightParams) error {
	if params.TenantID == "" {
		return fmt.Errorf("%w: tenant weight needs a tenant", driver.ErrInvalid)
	}
	if err := driver.ValidateLimit("tenant weight", params.Weight, 0); err != nil {
		return err
	}
	locks := []settingsLock{{tenantSettingsLockSQL, []any{params.TenantID}}}
	err := e.settingsTx(ctx, locks, func(x *Executor) error {
		var err error
		if params.Weight == 0 {
			_, err = x.db.Exec(ctx, `DELETE FROM docket_tenant_weights WHERE tenant_id = $1`, params.TenantID)
		} else {
			_, err = x.db.Exec(ctx, `
INSERT INTO docket_tenant_weights (tenant_id, weight) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET weight = excluded.weight`, params.TenantID, params.Weight)
		}
		if err != nil {
			return err
		}
		_, err = x.db.Exec(ctx, refreshTenantWeightsSQL, params.TenantID, max(params.Weight, 1))
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant weight: %w", interpretError(err))
	}
	return nil
}
