-- A job's partial result (queue.Job.PartialResult): what its handler has
-- found so far, reported with its progress (queue.Task.ProgressPartial)
-- and kept when the job ends, so readers see it before the job completes.
-- At most queue.MaxPartialResultBytes (16 KiB), checked by JobProgress.
-- NULL for none: adding the column rewrites nothing, and jobs that never
-- report one pay nothing. Written only by progressSQL (job_lease.go).
ALTER TABLE docket_jobs ADD COLUMN partial_result jsonb;
