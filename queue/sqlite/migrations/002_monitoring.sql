-- Monitoring (docs/monitoring.md): a failed job is retried by a new job
-- naming it (retry_of); the failed-jobs list keeps only those no job retries
-- yet, and finds the retries through this index. The views themselves are
-- PostgreSQL's (postgres/migrations/006_monitoring.sql); sqlite/monitor.go
-- computes the same columns from the store's clock.
CREATE INDEX docket_jobs_retry_of ON docket_jobs (retry_of) WHERE retry_of IS NOT NULL;
