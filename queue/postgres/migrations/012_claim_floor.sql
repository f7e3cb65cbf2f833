-- The claim floor (postgres/job_claim.go floorSQL, docs/claiming.md): where a
-- tenant's pending jobs start in the fetch index.
--
-- A claim reads a tenant's next jobs from the fetch index, whose entries of
-- jobs already claimed stay in the index until VACUUM removes them. Every
-- claim walked them again, once per tenant: at 10^6 pending jobs over 100
-- tenants the walk grew from 13 to 82 buffers per tenant per claim before
-- autovacuum came round, and it grows with the backlog. Each tenant row now
-- keeps a floor, a position (priority, id) at or before its first pending
-- job in fetch order (priority DESC, id), and the claim starts its index
-- scan there. NULL: no floor, scan from the start.
--
-- Every statement that makes a job pending other than an insert (a retry,
-- a release, a rescue, the schedule sweep) clears the floor of its tenant
-- (postgres/tenant_lock.go); an insert clears it when a new job has a
-- higher priority than the floor (docket_insert_jobs below), which relies
-- on docket_jobs_id_seq handing out increasing ids (its cache is 1). The
-- columns are in no index, so the claim's update of them is HOT.
ALTER TABLE docket_tenant_queues
    ADD COLUMN floor_priority smallint,
    ADD COLUMN floor_id bigint;

-- The function is migration 011's, with the floor check in wake_locked and
-- woken: a migration defines a function anew rather than editing an
-- applied one.
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[], boolean);

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.
