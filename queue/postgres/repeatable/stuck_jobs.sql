-- after: 005

-- Running jobs whose lease expired (their worker stopped heartbeating and
-- the rescue sweep has not run yet) or that have run over 30 minutes.
CREATE OR REPLACE VIEW docket_stuck_jobs WITH (security_invoker = true) AS
SELECT id, queue, kind, tenant_id, attempt, max_attempts, worker_id, started_at, lease_expires_at,
       extract(epoch FROM greatest(now() - started_at, interval '0'))::float8 AS running_seconds,
       CASE WHEN lease_expires_at < now() THEN 'lease_expired' ELSE 'running_too_long' END AS reason
FROM docket_jobs
WHERE state = 'running'
  AND (lease_expires_at < now() OR started_at < now() - interval '30 minutes');
