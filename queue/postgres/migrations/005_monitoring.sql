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

-- view docket_queue_health: its current definition is repeatable/queue_health.sql.

-- view docket_processing_performance: its current definition is repeatable/processing_performance.sql.

-- view docket_stuck_jobs: its current definition is repeatable/stuck_jobs.sql.

-- view docket_failed_jobs: its current definition is repeatable/failed_jobs.sql.

-- view docket_queue_depth: its current definition is repeatable/queue_depth.sql.

-- view queue_health: its current definition is repeatable/queue_health.sql.
-- view processing_performance: its current definition is repeatable/processing_performance.sql.
