package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// Pause state (migrations/006_pause.sql), by statement:
//
//	statement            docket_queues.paused_at  docket_tenant_pauses  docket_tenant_queues.paused
//	queuePauseSQL        set (kept if set)        -                     -
//	queueResumeSQL       cleared                  -                     -
//	tenantPauseSQL       -                        row inserted          set on every row of the tenant
//	tenantResumeSQL      -                        row deleted           cleared on every row of the tenant
//	docket_insert_jobs   -                        read (trigger)        set on a new row when paused
//	                                                                    (under the settings locks, tenant.go)
//	claimSQL             read (one probe)         read (per candidate)  read (claimable index)
//	positionSQL          read                     read                  -
//
// The tenant statements run under the tenant's settings lock
// (tenantSettingsLockSQL), which the trigger creating a claim row takes
// too, so a pause or resume sees every claim row, and a row created after
// it reads its outcome. The claim reads docket_tenant_pauses besides the
// paused column all the same, as it did before that lock.
const (
	queuePauseSQL = `
INSERT INTO docket_queues (name, paused_at) VALUES ($1, now())
ON CONFLICT (name) DO UPDATE SET paused_at = coalesce(docket_queues.paused_at, now()), updated_at = now()`
	queueResumeSQL = `
WITH resumed AS (
    UPDATE docket_queues SET paused_at = NULL, updated_at = now() WHERE name = $1 AND paused_at IS NOT NULL
)
SELECT pg_notify('docket_insert', $1)`

	// The tenant's rows are locked in key order, the order of every other
	// statement that locks several of them (postgres/tenant_lock.go).
	tenantPauseSQL = `
WITH paused AS (
    INSERT INTO docket_tenant_pauses (tenant_id) VALUES ($1) ON CONFLICT (tenant_id) DO NOTHING
), locked AS (
    SELECT queue, tenant_id FROM docket_tenant_queues
    WHERE tenant_id = $1 AND NOT paused
    ORDER BY queue, tenant_id
    FOR NO KEY UPDATE
)
UPDATE docket_tenant_queues t SET paused = true
FROM locked l WHERE t.queue = l.queue AND t.tenant_id = l.tenant_id`
	tenantResumeSQL = `
WITH resumed AS (
    DELETE FROM docket_tenant_pauses WHERE tenant_id = $1
), locked AS (
    SELECT queue, tenant_id FROM docket_tenant_queues
    WHERE tenant_id = $1 AND paused
    ORDER BY queue, tenant_id
    FOR NO KEY UPDATE
), cleared AS (
    UPDATE docket_tenant_queues t SET paused = false
    FROM locked l WHERE t.queue = l.queue AND t.tenant_id = l.tenant_id
    RETURNING t.queue, t.has_work
)
SELECT pg_notify('docket_insert', q.queue) FROM (SELECT DISTINCT queue FROM cleared WHERE has_work) q`

	pauseListSQL = `
SELECT name, '' AS tenant_id, paused_at FROM docket_queues WHERE paused_at IS NOT NULL
UNION ALL
SELECT '', tenant_id, paused_at FROM docket_tenant_pauses`
)

// QueuePauseSet pauses or resumes a queue. See driver.Executor.
func (e *Executor) QueuePauseSet(ctx context.Context, params *driver.QueuePauseParams) error {
	if err := driver.ValidateQueueName(params.Queue); err != nil {
		return err
	}
	sql := queuePauseSQL
	if !params.Paused {
		sql = queueResumeSQL
	}
	if _, err := e.db.Exec(ctx, sql, params.Queue); err != nil {
		return fmt.Errorf("set queue %s pause: %w", params.Queue, interpretError(err))
	}
	return nil
}

// TenantPauseSet pauses or resumes a tenant in every queue. See
// driver.Executor.
func (e *Executor) TenantPauseSet(ctx context.Context, params *driver.TenantPauseParams) error {
	if params.TenantID == "" {
		return fmt.Errorf("%w: pause needs a tenant", driver.ErrInvalid)
	}
	sql := tenantPauseSQL
	if !params.Paused {
		sql = tenantResumeSQL
	}
	// Under the settings lock: a claim row being created meanwhile (the
	// tenant's first job in a queue) is either committed and seen here, or
	// reads the pause after this commits (migration 019).
	err := e.settingsTx(ctx, []settingsLock{{tenantSettingsLockSQL, []any{params.TenantID}}}, func(x *Executor) error {
		_, err := x.db.Exec(ctx, sql, params.TenantID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant %s pause: %w", params.TenantID, interpretError(err))
	}
	return nil
}

// PauseList returns the paused queues and tenants.
func (e *Executor) PauseList(ctx context.Context) (*driver.Pauses, error) {
	rows, err := e.db.Query(ctx, pauseListSQL)
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", interpretError(err))
	}
	out := &driver.Pauses{Queues: map[string]time.Time{}, Tenants: map[string]time.Time{}}
	var name, tenant string
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&name, &tenant, &at}, func() error {
		if tenant != "" {
			out.Tenants[tenant] = at
		} else {
			out.Queues[name] = at
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", interpretError(err))
	}
	return out, nil
}
