-- docket_jobs_tenant leaves pending jobs out too (index writes
-- per job; docs/benchmarks.md). A new job's entry here served only
-- the listing of a tenant's jobs, which now reads pending jobs from the
-- fetch index, a queue and priority at a time (jobListSQL): one B-tree
-- insertion per job less, of the eight an enqueued, claimed and completed
-- job cost. Scheduled and finished jobs stay in it.
--
-- As with 014, the build holds writes to docket_jobs off: an operator with
-- a large table builds the index beforehand with CREATE INDEX
-- CONCURRENTLY under this name, and this migration then only swaps the
-- names (docs/migrations.md).
CREATE INDEX IF NOT EXISTS docket_jobs_tenant_settled ON docket_jobs (tenant_id, id)
    WHERE state NOT IN ('pending', 'running');
DROP INDEX docket_jobs_tenant;
ALTER INDEX docket_jobs_tenant_settled RENAME TO docket_jobs_tenant;
