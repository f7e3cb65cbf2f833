-- after: 005

-- Per hour (UTC; the current one and the 23 before it) and queue: the jobs that
-- finished, the run time (started_at to completed_at) of those completed,
-- its 95th percentile by nearest rank, and the most attempts a job took.
CREATE OR REPLACE VIEW docket_processing_performance WITH (security_invoker = true) AS
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

CREATE OR REPLACE VIEW processing_performance WITH (security_invoker = true) AS SELECT * FROM docket_processing_performance;
