-- claim: up to $2 pending jobs of queue $1 start a new attempt, leased for $3
-- microseconds to worker $4, shared by cost over the claimable tenants of
-- least virtual time (vtime), FIFO (priority, then id) within each. One statement: one
-- snapshot, one round trip. It never waits for a row lock (SKIP LOCKED); the
-- state machine and its invariants are in docs/claiming.md.
--
-- tenants: the claimable tenants in fair order (vtime, then served_at),
-- locked.
-- None while the queue is paused; no paused tenant. Under READ COMMITTED a
-- row locked here is re-checked on its newest version, so running <
-- max_running holds for every row taken, whatever committed meanwhile.
WITH tenants AS (
    SELECT tq.tenant_id, tq.served_at, tq.vtime, tq.weight, tq.max_running - tq.running AS free,
           tq.floor_priority, tq.floor_id
    FROM docket_tenant_queues tq
    WHERE tq.queue = $1 AND tq.has_work AND tq.running < tq.max_running AND NOT tq.paused
      AND NOT EXISTS (SELECT FROM docket_queues q WHERE q.name = $1 AND q.paused_at IS NOT NULL)
      AND NOT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = tq.tenant_id)
    ORDER BY tq.vtime, tq.served_at, tq.tenant_id
    LIMIT $2
    FOR NO KEY UPDATE SKIP LOCKED
-- shares: each tenant's share of $2, at most its free slots.
), shares AS (
    SELECT tenant_id, served_at, vtime, weight, free, floor_priority, floor_id,
           least(free, ceil($2::numeric / count(*) OVER ())::int) AS wanted
    FROM tenants
-- picked: each tenant's next jobs, from its claim floor in the fetch index
-- (two ordered range scans: the floor's priority from its id, then the lower
-- priorities; BETWEEN, not =, keeps the planner on the fetch index), locked
-- SKIP LOCKED: a job may have been claimed by a transaction that committed
-- after our snapshot and be locked by its worker's finish.
), picked AS (
    SELECT s.tenant_id, s.served_at, s.vtime, s.weight, s.free, s.wanted, p.id, p.priority, p.cost
    FROM shares s
    LEFT JOIN LATERAL (
        SELECT * FROM (
            SELECT j.id, j.priority, j.cost FROM docket_jobs j
            WHERE j.queue = $1 AND j.tenant_id = s.tenant_id AND j.state = 'pending'
              AND j.priority BETWEEN s.floor_priority AND s.floor_priority AND j.id >= s.floor_id
            ORDER BY j.priority DESC, j.id
            LIMIT s.wanted FOR NO KEY UPDATE SKIP LOCKED) at_floor
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority, j.cost FROM docket_jobs j
            WHERE j.queue = $1 AND j.tenant_id = s.tenant_id AND j.state = 'pending'
              AND j.priority < coalesce(s.floor_priority::int, 32768)
            ORDER BY j.priority DESC, j.id
            LIMIT s.wanted FOR NO KEY UPDATE SKIP LOCKED) below_floor
        LIMIT s.wanted
    ) p ON true
-- tagged: each picked job's start tag, its tenant's vtime plus the cost
-- picked before it over the weight; and, per tenant, the tag its next job
-- would have, when the share cut its jobs short (all it wanted picked,
-- fewer than its free slots): a bound.
), tagged AS (
    SELECT id, tenant_id, served_at, rn, tag,
           CASE WHEN count(*) OVER t = wanted AND wanted < free
                THEN vtime + 2 * (sum(cost) OVER t)::float8 / weight END AS bound
    FROM (SELECT id, tenant_id, served_at, vtime, weight, wanted, free, cost,
                 row_number() OVER w AS rn,
                 vtime + (sum(cost) OVER w - cost)::float8 / weight AS tag
          FROM picked WHERE id IS NOT NULL
          WINDOW w AS (PARTITION BY tenant_id ORDER BY priority DESC, id ROWS UNBOUNDED PRECEDING)) r
    WINDOW t AS (PARTITION BY tenant_id)
-- chosen: the jobs in start-tag order (each tenant's first job, then each
-- one's second, ... when costs and weights are 1 and the tenants level),
-- at most $2, none starting at or past the least bound: a tenant whose
-- jobs the share cut short would have been served first with more (two
-- shares of slack, so that tenants a share apart still share a claim).
), chosen AS (
    SELECT id, tag, served_at, tenant_id, rn, tag >= min(bound) OVER () AS cut
    FROM tagged
-- cut: whether the bound left a job out, for claim_more.sql (a
-- transaction-local setting): the next claim has more to give.
), cut AS (
    SELECT set_config('docket.claim_cut', coalesce(bool_or(cut), false)::text, true) AS cut FROM chosen

-- claimed: the chosen jobs start a new attempt with a new lease token.
), claimed AS (
    UPDATE docket_jobs j SET
        state = 'running',
        attempt = j.attempt + 1,
        lease_token = 1 + floor(random() * 9.2e18)::bigint,
        lease_expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond',
        started_at = clock_timestamp(),
        worker_id = $4,
        stage = '', progress = 0, progress_message = '',
        updated_at = clock_timestamp()
    FROM (SELECT id FROM chosen WHERE cut IS NOT TRUE ORDER BY tag, served_at, tenant_id, rn LIMIT $2) c
    WHERE j.id = c.id
    RETURNING j.id, j.queue, j.kind, j.tenant_id, j.args, j.state, j.priority, j.attempt, j.max_attempts,
              j.run_at, j.unique_key, j.retry_of, j.fail_on_timeout, j.stage, j.progress,
              j.progress_message, j.error_message, j.result, j.lease_token, j.lease_expires_at,
              j.worker_id, j.created_at, j.started_at, j.completed_at, j.updated_at, j.metadata,
              j.partial_result, j.cost, j.parent_id
-- tally: per tenant, the jobs picked and claimed and the first job taken,
-- in one grouping (no join of one CTE to another by tenant: the planner
-- cannot estimate a CTE's rows).
), tally AS (
    SELECT tenant_id, min(wanted) AS wanted, count(picked_id) AS picked, count(claimed_id) AS n,
           coalesce(sum(cost), 0) AS cost,
           max(priority) AS first_priority,
           (array_agg(claimed_id ORDER BY priority DESC, claimed_id) FILTER (WHERE claimed_id IS NOT NULL))[1] AS first_id
    FROM (SELECT tenant_id, wanted, id AS picked_id, NULL::bigint AS claimed_id, NULL::smallint AS priority,
                 NULL::int AS cost FROM picked
          UNION ALL
          SELECT tenant_id, NULL, NULL, id, priority, cost FROM claimed) u
    GROUP BY tenant_id
-- quiet: a tenant that had fewer pending jobs than it wanted (short) may be
-- marked idle only if no insert of it is in progress: the claim must get the
-- tenant's advisory lock exclusively without waiting (inserts hold it shared
-- from before their snapshot). The lock is tried for every short tenant and
-- for about 100 others (each takes a slot of the server's lock table).
), quiet AS (
    SELECT tenant_id, n, cost, first_priority, first_id, short,
           CASE WHEN short OR random() * count(*) OVER () < 100
                THEN pg_try_advisory_xact_lock(1684763761, docket_tenant_lock_key($1, tenant_id))
                ELSE false END AS quiet
    FROM (SELECT tenant_id, n, cost, first_priority, first_id, picked < wanted AS short FROM tally) g
-- served: running grows by what was claimed; vtime by the cost claimed over
-- the weight; served_at sends the tenant to the back, except one that got
-- nothing and looked empty (quiet) or was cut by the bound: it keeps its
-- turn; a short quiet tenant is marked idle (has_work false), with who
-- cleared it and when, for rewake and more.
), served AS (
    UPDATE docket_tenant_queues t SET
        running = t.running + f.n,
        vtime = t.vtime + f.cost::float8 / t.weight,
        served_at = CASE WHEN f.n = 0 AND (f.quiet OR NOT f.short) THEN t.served_at ELSE clock_timestamp() END,
        has_work = NOT (f.short AND f.quiet),
        cleared_at = CASE WHEN f.short AND f.quiet THEN clock_timestamp() ELSE t.cleared_at END,
        cleared_by = CASE WHEN f.short AND f.quiet THEN txid_current() ELSE t.cleared_by END
    FROM quiet f
    WHERE t.queue = $1 AND t.tenant_id = f.tenant_id
-- floors: the first job taken of each quiet tenant that got one, the
-- candidate for its claim floor, handed to floor.sql in a transaction-local
-- setting.
), floors AS (
    SELECT set_config('docket.claim_floor', coalesce(json_agg(json_build_object(
        'tenant_id', f.tenant_id, 'priority', f.first_priority, 'id', f.first_id))::text, '[]'), true) AS floors
    FROM quiet f
    WHERE f.quiet AND f.n > 0
)
SELECT id, queue, kind, tenant_id, args, state, priority, attempt, max_attempts, run_at, unique_key,
       retry_of, fail_on_timeout, stage, progress, progress_message, error_message, result,
       lease_token, lease_expires_at, worker_id, created_at, started_at, completed_at,
       updated_at, metadata, partial_result, cost, parent_id
FROM claimed, floors, cut
ORDER BY id
