-- Job metadata (queue.Job.Metadata): a JSON object of strings that travels
-- with a job without being its input, such as the trace context of the
-- request that enqueued it. NULL for none. As on PostgreSQL
-- (postgres/migrations/010_metadata.sql).
ALTER TABLE docket_jobs ADD COLUMN metadata TEXT;
