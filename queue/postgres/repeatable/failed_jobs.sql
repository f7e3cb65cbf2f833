-- after: 005

-- Failed jobs that need attention: no job retries them yet.
-- attempts_exhausted: it failed on its last allowed attempt (else its error
-- was permanent, it timed out with fail_on_timeout, or it was discarded).
CREATE OR REPLACE VIEW docket_failed_jobs WITH (security_invoker = true) AS
SELECT f.id, f.queue, f.kind, f.tenant_id, f.attempt, f.max_attempts,
       f.attempt >= f.max_attempts AS attempts_exhausted,
       f.error_message, f.created_at, f.completed_at
FROM docket_jobs f
WHERE f.state = 'failed'
  AND NOT EXISTS (SELECT 1 FROM docket_jobs r WHERE r.retry_of = f.id);
