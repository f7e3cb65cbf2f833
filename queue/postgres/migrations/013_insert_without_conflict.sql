-- docket_insert_jobs inserts the jobs without a unique key without ON
-- CONFLICT (WAL per job; docs/benchmarks.md). PostgreSQL inserts
-- every row of an INSERT ... ON CONFLICT speculatively: one more WAL record
-- per job (48 bytes, a tenth of an insert's) and a second visit of the
-- arbiter index, for the one job in many that has a key. The function is
-- otherwise migration 012's (a migration defines a function anew rather
-- than editing an applied one).
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[], boolean);

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.
