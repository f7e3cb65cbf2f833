-- after: 005

-- Per queue and state: how many jobs, and how long they have been in that
-- state (scheduled since created_at, pending since run_at, running since
-- started_at, finished since completed_at). One branch per state, each
-- naming its state as a constant, so that a reader who asks for some states
-- (WHERE state IN (...)) reads only those, each through its partial index.
CREATE OR REPLACE VIEW docket_queue_health WITH (security_invoker = true) AS
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

-- The names of the original specification.
CREATE OR REPLACE VIEW queue_health WITH (security_invoker = true) AS SELECT * FROM docket_queue_health;
