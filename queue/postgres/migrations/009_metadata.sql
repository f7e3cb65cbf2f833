-- Job metadata: string pairs that travel with a job and are not its
-- arguments (the W3C trace context of the request that enqueued it, so the
-- attempt's span joins the request's trace). NULL for none: the column
-- costs nothing on jobs without it.
ALTER TABLE docket_jobs ADD COLUMN metadata jsonb;

-- docket_insert_jobs and docket_enqueue take the metadata too: the
-- functions of migration 002 with one more parameter.
DROP FUNCTION IF EXISTS docket_enqueue(text, text, text, jsonb, int, int, timestamptz, text);
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[]);

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.

-- function docket_enqueue: its current definition is repeatable/enqueue.sql.
