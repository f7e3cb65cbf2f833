-- A job's partial result (queue.Job.PartialResult): what its handler has
-- found so far, reported with its progress and kept when the job ends.
-- JSON text, NULL for none. As on PostgreSQL
-- (postgres/migrations/012_partial_result.sql).
ALTER TABLE docket_jobs ADD COLUMN partial_result TEXT;
