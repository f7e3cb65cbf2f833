package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// Pause state (migrations/003_pause.sql), by statement, as on PostgreSQL
// (postgres/pause.go):
//
//	statement          docket_queues.paused_at  docket_tenant_pauses  docket_tenant_queues.paused
//	queuePauseSQL      set (kept if set)        -                     -
//	queueResumeSQL     cleared                  -                     -
//	tenantPauseSQL     -                        row inserted          set (tenantSlotsPausedSQL)
//	tenantResumeSQL    -                        row deleted           cleared (tenantSlotsPausedSQL)
//	markWorkSQL        -                        read (trigger)        set on a new row when paused
//	readyTenantsSQL    read                     -                     read (ready index)
//	slotStateSQL       read                     read                  -
//
// Write transactions run one at a time, so the paused column is exact and
// the claim need not read docket_tenant_pauses.
const (
	queuePauseSQL = `
INSERT INTO docket_queues (queue, paused_at) VALUES (?1, ?2)
ON CONFLICT (queue) DO UPDATE SET paused_at = COALESCE(paused_at, excluded.paused_at)`
	queueResumeSQL  = `UPDATE docket_queues SET paused_at = NULL WHERE queue = ?`
	tenantPauseSQL  = `INSERT INTO docket_tenant_pauses (tenant_id, paused_at) VALUES (?, ?) ON CONFLICT (tenant_id) DO NOTHING`
	tenantResumeSQL = `DELETE FROM docket_tenant_pauses WHERE tenant_id = ?`

	tenantSlotsPausedSQL = `UPDATE docket_tenant_queues SET paused = ?1 WHERE tenant_id = ?2 AND paused <> ?1`

	pauseListSQL = `
SELECT queue, '', paused_at FROM docket_queues WHERE paused_at IS NOT NULL
UNION ALL
SELECT '', tenant_id, paused_at FROM docket_tenant_pauses`
)

// QueuePauseSet pauses or resumes a queue. See driver.Executor. SQLite has
// no notifier: the queue's client wakes its workers in process.
func (e *executor) QueuePauseSet(ctx context.Context, p *driver.QueuePauseParams) error {
	if err := driver.ValidateQueueName(p.Queue); err != nil {
		return err
	}
	err := e.write(ctx, func(t *txn) error {
		var err error
		if p.Paused {
			_, err = t.exec(ctx, queuePauseSQL, p.Queue, t.now)
		} else {
			_, err = t.exec(ctx, queueResumeSQL, p.Queue)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set queue %s pause: %w", p.Queue, err)
	}
	return nil
}

// TenantPauseSet pauses or resumes a tenant in every queue. See
// driver.Executor.
func (e *executor) TenantPauseSet(ctx context.Context, p *driver.TenantPauseParams) error {
	if p.TenantID == "" {
		return fmt.Errorf("set tenant pause: %w: tenant is required", driver.ErrInvalid)
	}
	err := e.write(ctx, func(t *txn) error {
		var err error
		if p.Paused {
			_, err = t.exec(ctx, tenantPauseSQL, p.TenantID, t.now)
		} else {
			_, err = t.exec(ctx, tenantResumeSQL, p.TenantID)
		}
		if err != nil {
			return err
		}
		_, err = t.exec(ctx, tenantSlotsPausedSQL, p.Paused, p.TenantID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set tenant %s pause: %w", p.TenantID, err)
	}
	return nil
}

// PauseList returns the paused queues and tenants.
func (e *executor) PauseList(ctx context.Context) (*driver.Pauses, error) {
	out := &driver.Pauses{Queues: map[string]time.Time{}, Tenants: map[string]time.Time{}}
	err := e.readOne(func(q querier) error {
		rows, err := q.QueryContext(ctx, pauseListSQL)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, tenant string
			var at int64
			if err := rows.Scan(&name, &tenant, &at); err != nil {
				return err
			}
			if tenant != "" {
				out.Tenants[tenant] = fromMicros(at)
			} else {
				out.Queues[name] = fromMicros(at)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", err)
	}
	return out, nil
}
