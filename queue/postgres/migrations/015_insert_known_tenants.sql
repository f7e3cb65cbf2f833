-- docket_insert_jobs creates a tenant's claim row only when it is missing
-- (insert cost). Until now every batch called docket_tenant_limit,
-- fired the BEFORE INSERT trigger of docket_tenant_queues (pause.go) and
-- tried a speculative insert for each of its tenants, though the rows
-- exist after a tenant's first job: in a batch of 1,000 jobs across 100
-- tenants that was a fifth of the function's server time. A row the
-- statement's snapshot does not see (created by an insert still in
-- progress) is inserted as before, and ON CONFLICT waits for that insert
-- and does nothing. The function is otherwise migration 013's (a migration
-- defines a function anew rather than editing an applied one).
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[], boolean);

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.
