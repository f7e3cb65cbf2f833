-- after: 022

-- docket_insert_jobs inserts jobs given as parallel arrays (one element per
-- job; NULL elements take the defaults) and returns, per array index (ord,
-- from 1), the job: the new one, or with duplicate set the one that already
-- holds its (tenant_id, unique_key), from this call or before it. An index
-- with no row lost a race with a concurrent insert of the same key that had
-- not committed when this statement started: read it with a new statement.
--
-- It reads the clock once (v_now, before any lock): a job whose run_at is
-- after v_now is scheduled, else pending, and the tenants whose wake-up
-- locks it takes are those of its pending jobs. (With two readings, a job
-- falling due in between was inserted pending without its tenant's lock,
-- and a claim could mark the tenant idle unseen.) It ensures a
-- docket_tenant_queues row per (queue, tenant), marks the tenant claimable
-- when it got a pending job (a conditional update under a shared advisory
-- lock, so that a flood of inserts for one tenant does not serialise on its
-- row, yet no claim can mark it idle unseen: docs/claiming.md) and, with
-- p_notify, notifies docket_insert with the queue name; without, the caller
-- notifies after its commit. Its signature is kept across changes: CREATE
-- OR REPLACE keeps its oid, so inserts in flight during a migration keep
-- working (TestMigration_InsertsDuringMigration). p_cost (each job's cost,
-- NULL for 1) came with migration 022, which dropped the signature
-- without it.
CREATE OR REPLACE FUNCTION docket_insert_jobs(
    p_queue text[], p_kind text[], p_tenant_id text[], p_args jsonb[],
    p_priority int[], p_max_attempts int[], p_run_at timestamptz[],
    p_unique_key text[], p_retry_of bigint[], p_fail_on_timeout boolean[],
    p_metadata jsonb[], p_cost int[] DEFAULT NULL, p_notify boolean DEFAULT true
) RETURNS TABLE (ord bigint, duplicate boolean, job docket_jobs)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := clock_timestamp(); -- the one reading of the clock: locks and states agree
BEGIN
    -- Hold the tenants' wake-up locks before the snapshot of the insert
    -- below: a claim marking one of them idle either fails to take the lock
    -- (and leaves it claimable), or held it first, and then has committed
    -- by the time the update below reads has_work.
    PERFORM pg_advisory_xact_lock_shared(1684763761, k.key)
    FROM (SELECT DISTINCT docket_tenant_lock_key(u.queue, u.tenant_id) AS key
          FROM unnest(p_queue, p_tenant_id, p_run_at) AS u(queue, tenant_id, run_at)
          WHERE u.run_at IS NULL OR u.run_at <= v_now) k;

    RETURN QUERY
    WITH input AS MATERIALIZED (
        SELECT nextval('docket_jobs_id_seq'::regclass) AS id, i.*
        FROM unnest(p_queue, p_kind, p_tenant_id, p_args, p_priority, p_max_attempts,
                    p_run_at, p_unique_key, p_retry_of, p_fail_on_timeout, p_metadata, p_cost)
            WITH ORDINALITY AS i(queue, kind, tenant_id, args, priority, max_attempts,
                                 run_at, unique_key, retry_of, fail_on_timeout, metadata, cost, ord)
        ORDER BY i.ord
    ), keyed AS (
        -- Only jobs with a unique key go through ON CONFLICT: PostgreSQL
        -- inserts every row of such a statement speculatively, one more
        -- WAL record (and a second pass over the arbiter index) per job.
        INSERT INTO docket_jobs AS j (id, queue, kind, tenant_id, args, state, priority, max_attempts,
                                      run_at, unique_key, retry_of, fail_on_timeout, metadata, cost)
        SELECT i.id, i.queue, i.kind, i.tenant_id, coalesce(i.args, '{}'),
               CASE WHEN i.run_at > v_now THEN 'scheduled' ELSE 'pending' END,
               coalesce(i.priority, 0), coalesce(i.max_attempts, 3), coalesce(i.run_at, now()),
               nullif(i.unique_key, ''), nullif(i.retry_of, 0), coalesce(i.fail_on_timeout, false),
               nullif(i.metadata, '{}'::jsonb), coalesce(i.cost, 1)
        FROM input i
        WHERE nullif(i.unique_key, '') IS NOT NULL
        ORDER BY i.ord
        ON CONFLICT (tenant_id, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING j.*
    ), plain AS (
        INSERT INTO docket_jobs AS j (id, queue, kind, tenant_id, args, state, priority, max_attempts,
                                      run_at, unique_key, retry_of, fail_on_timeout, metadata, cost)
        SELECT i.id, i.queue, i.kind, i.tenant_id, coalesce(i.args, '{}'),
               CASE WHEN i.run_at > v_now THEN 'scheduled' ELSE 'pending' END,
               coalesce(i.priority, 0), coalesce(i.max_attempts, 3), coalesce(i.run_at, now()),
               nullif(i.unique_key, ''), nullif(i.retry_of, 0), coalesce(i.fail_on_timeout, false),
               nullif(i.metadata, '{}'::jsonb), coalesce(i.cost, 1)
        FROM input i
        WHERE nullif(i.unique_key, '') IS NULL
        ORDER BY i.ord
        RETURNING j.*
    ), inserted AS (
        SELECT * FROM keyed UNION ALL SELECT * FROM plain
    ), tenants AS (
        SELECT queue, tenant_id, bool_or(state = 'pending') AS pending,
               max(priority) FILTER (WHERE state = 'pending') AS top
        FROM inserted GROUP BY queue, tenant_id
    ), created AS (
        INSERT INTO docket_tenant_queues (queue, tenant_id, max_running)
        SELECT t.queue, t.tenant_id, docket_tenant_limit(t.queue, t.tenant_id)
        FROM tenants t
        WHERE NOT EXISTS (SELECT FROM docket_tenant_queues e WHERE e.queue = t.queue AND e.tenant_id = t.tenant_id)
        ORDER BY t.queue, t.tenant_id
        ON CONFLICT (queue, tenant_id) DO NOTHING
    ), wake_locked AS (
        -- Jobs, then tenant rows in key order: the lock order of every
        -- statement of the Go driver (postgres/tenant_lock.go). Only rows
        -- not marked yet, or whose claim floor a new job precedes, are
        -- locked (re-checked on their newest version); the advisory lock
        -- above makes reading has_work and the floor here safe. A new
        -- job's id is greater than the floor's (the sequence is allocated
        -- after the lock, the floor's job before it), so it precedes the
        -- floor only with a higher priority.
        SELECT l.queue, l.tenant_id
        FROM tenants t JOIN docket_tenant_queues l ON l.queue = t.queue AND l.tenant_id = t.tenant_id
        WHERE t.pending AND (NOT l.has_work OR l.floor_priority < t.top)
        ORDER BY l.queue, l.tenant_id
        FOR NO KEY UPDATE OF l
    ), woken AS (
        UPDATE docket_tenant_queues tq SET
            has_work = true,
            floor_priority = CASE WHEN tq.floor_priority < t.top THEN NULL ELSE tq.floor_priority END,
            floor_id = CASE WHEN tq.floor_priority < t.top THEN NULL ELSE tq.floor_id END
        FROM wake_locked k JOIN tenants t ON t.queue = k.queue AND t.tenant_id = k.tenant_id
        WHERE tq.queue = k.queue AND tq.tenant_id = k.tenant_id
    )
    SELECT i.ord, false, x::docket_jobs
    FROM input i JOIN inserted x ON x.id = i.id
    UNION ALL
    SELECT i.ord, true, coalesce(
        (SELECT x::docket_jobs FROM inserted x
         WHERE x.tenant_id = i.tenant_id AND x.unique_key = i.unique_key),
        (SELECT e FROM docket_jobs e WHERE e.tenant_id = i.tenant_id AND e.unique_key = i.unique_key))
    FROM input i
    WHERE nullif(i.unique_key, '') IS NOT NULL AND NOT EXISTS (SELECT FROM inserted x WHERE x.id = i.id);

    -- Hints only: a queue whose jobs all turned out duplicates is notified
    -- too. PostgreSQL sends one per queue per transaction. Without
    -- p_notify the caller sends them after its commit.
    IF p_notify THEN
        PERFORM pg_notify('docket_insert', q.queue)
        FROM (SELECT DISTINCT queue FROM unnest(p_queue, p_run_at) AS u(queue, run_at)
              WHERE run_at IS NULL OR run_at <= v_now) q;
    END IF;
END
$$;
