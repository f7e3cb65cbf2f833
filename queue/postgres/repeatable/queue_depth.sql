-- after: 005

-- Per queue and tenant with work: pending and running jobs, and the wait
-- of the oldest pending one. One branch per state, so that each reads its
-- state's partial index (docket_jobs_fetch, docket_jobs_lease), not the
-- finished jobs.
CREATE OR REPLACE VIEW docket_queue_depth WITH (security_invoker = true) AS
SELECT queue, tenant_id, sum(pending)::bigint AS pending, sum(running)::bigint AS running,
       coalesce(extract(epoch FROM greatest(now() - min(run_at), interval '0')), 0)::float8
           AS oldest_pending_age_seconds
FROM (SELECT queue, tenant_id, 1 AS pending, 0 AS running, run_at FROM docket_jobs WHERE state = 'pending'
      UNION ALL
      SELECT queue, tenant_id, 0, 1, NULL FROM docket_jobs WHERE state = 'running') j
GROUP BY queue, tenant_id;
