-- claim_more: last in the claim's transaction, with a new snapshot. Column
-- one: whether a claimable tenant the claim did not take (held by another
-- transaction, or beyond the claim's limit) has at least two pending jobs
-- (one is most often taken by the claim that holds the row). Every row the
-- claim served is its own (age(xmin) = 0) with the newest served_at, so the
-- probe, in the claim's order (vtime), passes it for another tenant; it
-- looks at the first 100 such tenants only (moreProbeTenants), which bounds it when many rows
-- are still marked claimable with nothing left. Column two: the tenants the
-- claim found empty and marked idle without serving them; when those and the
-- tenants served fill the claim's limit, a tenant with work may have been
-- left out, and JobClaim reports more. Column three: whether claim.sql's
-- bound left a tenant's jobs out (its fair share was reached): the next
-- claim takes them, and JobClaim reports more. $1: the queue.
SELECT EXISTS (
    SELECT FROM (
        SELECT tq.queue, tq.tenant_id, tq.floor_priority, tq.floor_id
        FROM docket_tenant_queues tq
        WHERE tq.queue = $1 AND tq.has_work AND tq.running < tq.max_running AND NOT tq.paused
          AND (age(tq.xmin) <> 0 OR tq.served_at < now())
          AND NOT EXISTS (SELECT FROM docket_queues q WHERE q.name = $1 AND q.paused_at IS NOT NULL)
          AND NOT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = tq.tenant_id)
        ORDER BY tq.vtime, tq.served_at, tq.tenant_id
        LIMIT 100
    ) tq
    WHERE (SELECT count(*) FROM (
        SELECT * FROM (
            SELECT j.id, j.priority FROM docket_jobs j
            WHERE j.queue = tq.queue AND j.tenant_id = tq.tenant_id AND j.state = 'pending'
              AND j.priority BETWEEN tq.floor_priority AND tq.floor_priority AND j.id >= tq.floor_id
            ORDER BY j.priority DESC, j.id
            LIMIT 2 ) at_floor
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority FROM docket_jobs j
            WHERE j.queue = tq.queue AND j.tenant_id = tq.tenant_id AND j.state = 'pending'
              AND j.priority < coalesce(tq.floor_priority::int, 32768)
            ORDER BY j.priority DESC, j.id
            LIMIT 2 ) below_floor
        LIMIT 2
          ) two) = 2),
    (SELECT count(*) FROM docket_tenant_queues t
     WHERE t.queue = $1 AND NOT t.has_work AND t.cleared_at >= now()
       AND t.cleared_by = txid_current_if_assigned() AND t.served_at < now()),
    coalesce(current_setting('docket.claim_cut', true), '') = 'true'
