package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// slotReleaseSQL frees the slots that cancelled attempts hold (see
// cancelSQL): $1 ids, $2 attempts, $3 tokens, one lease per element. It
// deletes the holds the leases name and records one freed slot per hold in
// docket_tenant_freed, as the worker's finishes do, for the next claim to
// fold in: no tenant row is locked. It returns how many it freed.
var slotReleaseSQL = `
WITH released AS (
    DELETE FROM docket_slot_holds h
    USING unnest($1::bigint[], $2::int[], $3::bigint[]) AS l(id, attempt, token)
    WHERE h.job_id = l.id AND h.attempt = l.attempt AND h.lease_token = l.token
    RETURNING h.job_id
), ended AS (
    SELECT j.queue, j.tenant_id, j.state FROM released r JOIN docket_jobs j ON j.id = r.job_id
), ` + recordFreedSlotsSQL("ended") + `
SELECT count(*) FROM ended`

// JobSlotRelease frees the slots cancelled attempts hold; see
// driver.Executor.
func (e *Executor) JobSlotRelease(ctx context.Context, leases []driver.Lease) (int, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	ids, attempts, tokens := make([]int64, len(leases)), make([]int32, len(leases)), make([]int64, len(leases))
	for i, l := range leases {
		ids[i], attempts[i], tokens[i] = l.JobID, int32(l.Attempt), l.Token
	}
	var n int
	err := e.retryDeadlock(ctx, func() error {
		return e.db.QueryRow(ctx, slotReleaseSQL, ids, attempts, tokens).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("release slots: %w", interpretError(err))
	}
	return n, nil
}
