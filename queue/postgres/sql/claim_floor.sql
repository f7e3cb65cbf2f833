-- claim_floor: after claim.sql and claim_rewake.sql, in the claim's
-- transaction and with a new snapshot, moves the claim floor of each tenant
-- the claim left a candidate for (docket.claim_floor) to the tenant's first
-- pending job at or after its old floor, or, when it has none, to the first
-- job the claim took. $1: the queue.
--
-- The floor is a position (priority, id) at or before every pending job of
-- the tenant in fetch order (priority DESC, id). It holds because: the claim
-- leaves a candidate only for tenants whose advisory lock it took
-- exclusively, so an insert of the tenant waits for the claim's commit and
-- then allocates ids above the floor (and clears the floor if its job has a
-- higher priority); this statement's snapshot, taken after that lock, sees
-- jobs the claim skipped as locked and inserts committed since the claim's
-- snapshot; anything else that makes a job pending (retry, release, rescue,
-- schedule) locks the tenant row and clears the floor.
UPDATE docket_tenant_queues t SET (floor_priority, floor_id) = (
    SELECT coalesce(q.priority, c.priority), coalesce(q.id, c.id)
    FROM (SELECT) one LEFT JOIN LATERAL (
        SELECT * FROM (
            SELECT j.id, j.priority FROM docket_jobs j
            WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'pending'
              AND j.priority BETWEEN t.floor_priority AND t.floor_priority AND j.id >= t.floor_id
            ORDER BY j.priority DESC, j.id
            LIMIT 1 ) at_floor
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority FROM docket_jobs j
            WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'pending'
              AND j.priority < coalesce(t.floor_priority::int, 32768)
            ORDER BY j.priority DESC, j.id
            LIMIT 1 ) below_floor
        LIMIT 1
    ) q ON true)
FROM json_to_recordset(coalesce(nullif(current_setting('docket.claim_floor', true), ''), '[]')::json)
    AS c(tenant_id text, priority smallint, id bigint)
WHERE t.queue = $1 AND t.tenant_id = c.tenant_id
