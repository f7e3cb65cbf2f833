package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// slotReleaseSQL deletes the hold a lease names and returns its job's
// tenant slot (see holdSlotSQL).
const slotReleaseSQL = `
DELETE FROM docket_slot_holds WHERE job_id = ?1 AND attempt = ?2 AND lease_token = ?3
RETURNING (SELECT queue FROM docket_jobs WHERE id = ?1), (SELECT tenant_id FROM docket_jobs WHERE id = ?1)`

// expiredHoldsSQL deletes up to ?2 holds whose lease expired by ?1 and
// returns their jobs' tenant slots (none for a job deleted since).
const expiredHoldsSQL = `
DELETE FROM docket_slot_holds WHERE rowid IN (
	SELECT rowid FROM docket_slot_holds WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2)
RETURNING (SELECT queue FROM docket_jobs WHERE id = job_id), (SELECT tenant_id FROM docket_jobs WHERE id = job_id)`

// JobSlotRelease frees the slots cancelled attempts hold; see
// driver.Executor.
func (e *executor) JobSlotRelease(ctx context.Context, leases []driver.Lease) (int, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	n := 0
	err := e.write(ctx, func(t *txn) error {
		n = 0
		freed := make(slotDelta)
		for _, l := range leases {
			k, err := t.heldSlots(ctx, slotReleaseSQL, l.JobID, l.Attempt, l.Token)
			if err != nil {
				return err
			}
			n += k.add(freed)
		}
		return t.freeSlots(ctx, freed)
	})
	if err != nil {
		return 0, fmt.Errorf("release slots: %w", err)
	}
	return n, nil
}

// freeExpiredHolds frees up to limit slots held past their lease.
func (t *txn) freeExpiredHolds(ctx context.Context, limit int) error {
	k, err := t.heldSlots(ctx, expiredHoldsSQL, t.now, limit)
	if err != nil {
		return err
	}
	freed := make(slotDelta)
	k.add(freed)
	return t.freeSlots(ctx, freed)
}

// heldSlotList is the tenant slots of deleted holds.
type heldSlotList []slot

func (h heldSlotList) add(d slotDelta) int {
	for _, s := range h {
		d.add(&driver.Job{Queue: s.queue, TenantID: s.tenant, State: driver.StateCancelled})
	}
	return len(h)
}

// heldSlots runs a statement that deletes holds and returns their slots.
func (t *txn) heldSlots(ctx context.Context, query string, args ...any) (heldSlotList, error) {
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("free held slots: %w", err)
	}
	defer rows.Close()
	var out heldSlotList
	for rows.Next() {
		var q, tenant *string
		if err := rows.Scan(&q, &tenant); err != nil {
			return nil, err
		}
		if q != nil && tenant != nil {
			out = append(out, slot{*q, *tenant})
		}
	}
	return out, rows.Err()
}
