-- Monitoring views (docs/monitoring.md). They run with the privileges of
-- whoever reads them (security_invoker): the owner sees every tenant's jobs;
-- none is granted to docket_app, and row-level security would limit it to
-- its tenant's rows if one were.
-- Ages and durations are in seconds, from the database clock (now()).
-- The SQLite driver computes the same columns in sqlite/monitor.go: change
-- both together, and storetest.RunMonitor pins them.

-- A failed job is retried by a new job naming it (retry_of); the failed-jobs
-- view keeps only those no job retries yet.
CREATE INDEX docket_jobs_retry_of ON docket_jobs (retry_of) WHERE retry_of IS NOT NULL;

-- Per queue and state: how many jobs, and how long they have been in that
-- state (scheduled since created_at, pending since run_at, running since
-- started_at, finished since completed_at). One branch per state, each
-- naming its state as a constant, so that a reader who asks for some states
-- (WHERE state IN (...)) reads only those, each through its partial index.
CREATE VIEW docket_queue_health WITH (security_invoker = true) AS
SELECT queue, state, count(*)::bigint AS jobs,
       extract(epoch FROM avg(age))::float8 AS avg_age_seconds,
       extract(epoch FROM max(age))::float8 AS max_age_seconds
FROM (SELECT queue, 'scheduled'::text AS state, greatest(now() - created_at, interval '0') AS age
      FROM docket_jobs WHERE state = 'scheduled'
      UNION ALL
      SELECT queue, 'pending', greatest(now() - run_at, interval '0') FROM docket_jobs WHERE state = 'pending'
      UNION ALL
      SELECT queue, 'running', greatest(now() - coalesce(started_at, now()), interval '0')
      FROM docket_jobs WHERE state = 'running'
      UNION ALL
      SELECT queue, 'completed', greatest(now() - coalesce(completed_at, now()), interval '0')
      FROM docket_jobs WHERE state = 'completed'
      UNION ALL
      SELECT queue, 'failed', greatest(now() - coalesce(completed_at, now()), interval '0')
      FROM docket_jobs WHERE state = 'failed'
      UNION ALL
      SELECT queue, 'cancelled', greatest(now() - coalesce(completed_at, now()), interval '0')
      FROM docket_jobs WHERE state = 'cancelled') j
GROUP BY queue, state;

-- Per hour (UTC; the current one and the 23 before it) and queue: the jobs that
-- finished, the run time (started_at to completed_at) of those completed,
-- its 95th percentile by nearest rank, and the most attempts a job took.
CREATE VIEW docket_processing_performance WITH (security_invoker = true) AS
SELECT date_trunc('hour', completed_at, 'UTC') AS hour, queue,
       count(*) FILTER (WHERE state = 'completed')::bigint AS completed,
       count(*) FILTER (WHERE state = 'failed')::bigint AS failed,
       extract(epoch FROM avg(completed_at - started_at) FILTER (WHERE state = 'completed'))::float8
           AS avg_duration_seconds,
       extract(epoch FROM percentile_disc(0.95) WITHIN GROUP (ORDER BY completed_at - started_at)
           FILTER (WHERE state = 'completed'))::float8 AS p95_duration_seconds,
       max(attempt) AS max_attempts
FROM docket_jobs
WHERE state IN ('completed', 'failed')
  AND completed_at >= date_trunc('hour', now(), 'UTC') - interval '23 hours'
GROUP BY 1, 2;

-- Running jobs whose lease expired (their worker stopped heartbeating and
-- the rescue sweep has not run yet) or that have run over 30 minutes.
CREATE VIEW docket_stuck_jobs WITH (security_invoker = true) AS
SELECT id, queue, kind, tenant_id, attempt, max_attempts, worker_id, started_at, lease_expires_at,
       extract(epoch FROM greatest(now() - started_at, interval '0'))::float8 AS running_seconds,
       CASE WHEN lease_expires_at < now() THEN 'lease_expired' ELSE 'running_too_long' END AS reason
FROM docket_jobs
WHERE state = 'running'
  AND (lease_expires_at < now() OR started_at < now() - interval '30 minutes');

-- Failed jobs that need attention: no job retries them yet.
-- attempts_exhausted: it failed on its last allowed attempt (else its error
-- was permanent, it timed out with fail_on_timeout, or it was discarded).
CREATE VIEW docket_failed_jobs WITH (security_invoker = true) AS
SELECT f.id, f.queue, f.kind, f.tenant_id, f.attempt, f.max_attempts,
       f.attempt >= f.max_attempts AS attempts_exhausted,
       f.error_message, f.created_at, f.completed_at
FROM docket_jobs f
WHERE f.state = 'failed'
  AND NOT EXISTS (SELECT 1 FROM docket_jobs r WHERE r.retry_of = f.id);

-- Per queue and tenant with work: pending and running jobs, and the wait
-- of the oldest pending one. One branch per state, so that each reads its
-- state's partial index (docket_jobs_fetch, docket_jobs_lease), not the
-- finished jobs.
CREATE VIEW docket_queue_depth WITH (security_invoker = true) AS
SELECT queue, tenant_id, sum(pending)::bigint AS pending, sum(running)::bigint AS running,
       coalesce(extract(epoch FROM greatest(now() - min(run_at), interval '0')), 0)::float8
           AS oldest_pending_age_seconds
FROM (SELECT queue, tenant_id, 1 AS pending, 0 AS running, run_at FROM docket_jobs WHERE state = 'pending'
      UNION ALL
      SELECT queue, tenant_id, 0, 1, NULL FROM docket_jobs WHERE state = 'running') j
GROUP BY queue, tenant_id;

-- The names of the original specification.
CREATE VIEW queue_health WITH (security_invoker = true) AS SELECT * FROM docket_queue_health;
CREATE VIEW processing_performance WITH (security_invoker = true) AS SELECT * FROM docket_processing_performance;
