-- docket_jobs_tenant leaves running jobs out (index writes per
-- job; docs/benchmarks.md). Every claim and every finish is a non-HOT
-- update of the job's row (state is in the partial indexes' predicates),
-- and a non-HOT update adds an entry to every index whose predicate the
-- new row version meets: B-tree insertions were a third of the server's
-- CPU in a steady run, nine per job. A claimed job's entry here served
-- only the listing of a tenant's jobs, which now reads running jobs
-- through docket_jobs_lease (running jobs are bounded by the workers'
-- slots): one insertion per job less.
--
-- The build holds writes to docket_jobs off (about 11 s per million jobs on
-- 2 vCPUs): an operator with a large table builds the index beforehand
-- with CREATE INDEX CONCURRENTLY under this name, and this migration then
-- only swaps the names (docs/migrations.md).
CREATE INDEX IF NOT EXISTS docket_jobs_tenant_idle ON docket_jobs (tenant_id, id) WHERE state <> 'running';
DROP INDEX docket_jobs_tenant;
ALTER INDEX docket_jobs_tenant_idle RENAME TO docket_jobs_tenant;
