-- A transaction that calls pg_notify holds a cluster-wide lock from its
-- commit until its commit record is flushed, so notifying transactions
-- commit one at a time (docs/reliability.md, "Notify under durable commits"). The Go driver's
-- enqueues in a transaction of its own therefore notify after they commit,
-- coalesced and without a flush of their own (postgres/notify_post.go):
-- docket_insert_jobs takes p_notify, true by default, so docket_enqueue and
-- inserts in a caller's transaction notify at its commit as before.
--
-- The function is migration 010's with that one parameter: a migration
-- defines a function anew rather than editing an applied one.
DROP FUNCTION docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[]);

CREATE FUNCTION docket_insert_jobs(
    p_queue text[], p_kind text[], p_tenant_id text[], p_args jsonb[],
    p_priority int[], p_max_attempts int[], p_run_at timestamptz[],
    p_unique_key text[], p_retry_of bigint[], p_fail_on_timeout boolean[],
    p_metadata jsonb[], p_notify boolean DEFAULT true
) RETURNS TABLE (ord bigint, duplicate boolean, job docket_jobs)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    -- Hold the tenants' wake-up locks before the snapshot of the insert
    -- below: a claim marking one of them idle either fails to take the lock
    -- (and leaves it claimable), or held it first, and then has committed
    -- by the time the update below reads has_work.
    PERFORM pg_advisory_xact_lock_shared(1684763761, k.key)
    FROM (SELECT DISTINCT docket_tenant_lock_key(u.queue, u.tenant_id) AS key
          FROM unnest(p_queue, p_tenant_id, p_run_at) AS u(queue, tenant_id, run_at)
          WHERE u.run_at IS NULL OR u.run_at <= clock_timestamp()) k;

    RETURN QUERY
    WITH input AS MATERIALIZED (
        SELECT nextval('docket_jobs_id_seq'::regclass) AS id, i.*
        FROM unnest(p_queue, p_kind, p_tenant_id, p_args, p_priority, p_max_attempts,
                    p_run_at, p_unique_key, p_retry_of, p_fail_on_timeout, p_metadata)
            WITH ORDINALITY AS i(queue, kind, tenant_id, args, priority, max_attempts,
                                 run_at, unique_key, retry_of, fail_on_timeout, metadata, ord)
        ORDER BY i.ord
    ), inserted AS (
        INSERT INTO docket_jobs AS j (id, queue, kind, tenant_id, args, state, priority, max_attempts,
                                      run_at, unique_key, retry_of, fail_on_timeout, metadata)
        SELECT i.id, i.queue, i.kind, i.tenant_id, coalesce(i.args, '{}'),
               CASE WHEN i.run_at > clock_timestamp() THEN 'scheduled' ELSE 'pending' END,
               coalesce(i.priority, 0), coalesce(i.max_attempts, 3), coalesce(i.run_at, now()),
               nullif(i.unique_key, ''), nullif(i.retry_of, 0), coalesce(i.fail_on_timeout, false),
               nullif(i.metadata, '{}'::jsonb)
        FROM input i
        ORDER BY i.ord
        ON CONFLICT (tenant_id, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING j.*
    ), tenants AS (
        SELECT queue, tenant_id, bool_or(state = 'pending') AS pending
        FROM inserted GROUP BY queue, tenant_id
    ), created AS (
        INSERT INTO docket_tenant_queues (queue, tenant_id, max_running)
        SELECT t.queue, t.tenant_id, docket_tenant_limit(t.queue, t.tenant_id)
        FROM tenants t ORDER BY t.queue, t.tenant_id
        ON CONFLICT (queue, tenant_id) DO NOTHING
    ), wake_locked AS (
        -- Jobs, then tenant rows in key order: the lock order of every
        -- statement of the Go driver (postgres/tenant_lock.go). Only rows
        -- not marked yet are locked (re-checked on their newest version);
        -- the advisory lock above makes reading has_work here safe.
        SELECT l.queue, l.tenant_id
        FROM tenants t JOIN docket_tenant_queues l ON l.queue = t.queue AND l.tenant_id = t.tenant_id
        WHERE t.pending AND NOT l.has_work
        ORDER BY l.queue, l.tenant_id
        FOR NO KEY UPDATE OF l
    ), woken AS (
        UPDATE docket_tenant_queues tq SET has_work = true
        FROM wake_locked k
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
              WHERE run_at IS NULL OR run_at <= clock_timestamp()) q;
    END IF;
END
$$;
