package postgres

// Lock order. Statements that change both jobs and tenant rows lock the
// jobs first, then the tenant rows in (queue, tenant_id) order, so two of
// them never wait for each other in a cycle. A claim locks tenant rows
// first, then jobs, but both with SKIP LOCKED: it never waits for a lock,
// so it cannot close a cycle either.
//
// The helpers below write that second step as CTEs for a statement whose
// CTE cte holds the changed jobs' queue, tenant_id and state. Each locks
// in a SELECT whose LockRows sits above its Sort, so rows are locked in
// sorted order whatever the join below, and then updates what it locked.
// The joins go from the few changed tenants to the tenant table's primary
// key, never the other way round, so their cost does not grow with the
// number of tenants.

// freeSlotsSQL returns the CTEs slots_locked and slots_freed: one slot
// freed per row of cte, and the tenant made claimable, and its claim floor
// cleared (see floorSQL), when one of its jobs went back to pending.
func freeSlotsSQL(cte string) string {
	return `slots_locked AS (
    SELECT l.queue, l.tenant_id, s.n, s.wake
    FROM (SELECT queue, tenant_id, count(*) AS n, bool_or(state = 'pending') AS wake
          FROM ` + cte + ` GROUP BY queue, tenant_id) s
    JOIN docket_tenant_queues l ON l.queue = s.queue AND l.tenant_id = s.tenant_id
    ORDER BY l.queue, l.tenant_id
    FOR NO KEY UPDATE OF l
), slots_freed AS (
    UPDATE docket_tenant_queues t SET
        running = greatest(t.running - k.n, 0),
        has_work = t.has_work OR k.wake,
        floor_priority = CASE WHEN k.wake THEN NULL ELSE t.floor_priority END,
        floor_id = CASE WHEN k.wake THEN NULL ELSE t.floor_id END
    FROM slots_locked k
    WHERE t.queue = k.queue AND t.tenant_id = k.tenant_id
)`
}

// recordFreedSlotsSQL is freeSlotsSQL for the worker's batched finishes
// (see JobFinish): the CTEs slots_freed, slots_woken, wake_locked and
// woken record one slot freed per row of cte as one docket_tenant_freed
// row per tenant, to be folded into running by the next claim (see
// foldFreedSQL), and make claimable the tenants with a job back to
// pending. Recording takes no lock on the tenant row, so a finish neither
// waits for a claim that holds it nor makes claims skip its tenants until
// it commits; only the rare job back to pending locks the row.
func recordFreedSlotsSQL(cte string) string {
	return `slots_freed AS (
    INSERT INTO docket_tenant_freed (tenant_id, queue, n)
    SELECT tenant_id, queue, count(*) FROM ` + cte + ` GROUP BY queue, tenant_id
), slots_woken AS (
    SELECT queue, tenant_id FROM ` + cte + ` WHERE state = 'pending'
), ` + wakeTenantsSQL("slots_woken")
}

// foldFreedSQL subtracts the slots recorded in docket_tenant_freed from
// their tenants' running counters, for queue $1, and deletes the records.
// A claim runs it first, in its transaction: the tenant rows it folds stay
// locked to its commit. It locks tenant rows with SKIP LOCKED (a locked
// tenant is folded by a later claim) and then deletes only the records of
// tenants it holds, which nobody else deletes, so it never waits. Records
// committed after its snapshot wait for the next claim; running is never
// below the tenant's running jobs.
const foldFreedSQL = `
WITH owed AS (
    SELECT DISTINCT tenant_id FROM docket_tenant_freed WHERE queue = $1
), locked AS (
    SELECT t.tenant_id
    FROM owed o JOIN docket_tenant_queues t ON t.queue = $1 AND t.tenant_id = o.tenant_id
    ORDER BY t.tenant_id
    FOR NO KEY UPDATE OF t SKIP LOCKED
), gone AS (
    DELETE FROM docket_tenant_freed f USING locked l
    WHERE f.tenant_id = l.tenant_id AND f.queue = $1
    RETURNING f.tenant_id, f.n
), sums AS (
    SELECT tenant_id, sum(n) AS n FROM gone GROUP BY tenant_id
)
UPDATE docket_tenant_queues t SET running = greatest(t.running - s.n, 0)
FROM sums s
WHERE t.queue = $1 AND t.tenant_id = s.tenant_id`

// wakeTenantsSQL returns the CTEs wake_locked and woken, which mark
// claimable the tenants of the rows of cte and clear their claim floor (a
// job back to pending keeps its id, before the floor; see floorSQL). It
// locks each row, waiting for a claim that may be marking it idle or
// moving its floor, and updates it when its newest version (which the
// lock returns) is not marked or has a floor (see rewakeSQL). Inserts,
// which must not serialise on a busy tenant's row, use an advisory lock
// instead (docket_insert_jobs).
func wakeTenantsSQL(cte string) string {
	return `wake_locked AS (
    SELECT l.queue, l.tenant_id, l.has_work, l.floor_id
    FROM (SELECT DISTINCT queue, tenant_id FROM ` + cte + `) s
    JOIN docket_tenant_queues l ON l.queue = s.queue AND l.tenant_id = s.tenant_id
    ORDER BY l.queue, l.tenant_id
    FOR NO KEY UPDATE OF l
), woken AS (
    UPDATE docket_tenant_queues t SET has_work = true, floor_priority = NULL, floor_id = NULL
    FROM wake_locked k
    WHERE t.queue = k.queue AND t.tenant_id = k.tenant_id AND (NOT k.has_work OR k.floor_id IS NOT NULL)
)`
}
