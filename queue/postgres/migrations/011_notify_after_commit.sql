-- A transaction that calls pg_notify holds a cluster-wide lock from its
-- commit until its commit record is flushed, so notifying transactions
-- commit one at a time (docs/reliability.md, "Notify under durable commits"). The Go driver's
-- enqueues in a transaction of its own therefore notify after they commit,
-- coalesced and without a flush of their own (postgres/notify_post.go):
-- docket_insert_jobs takes p_notify, true by default, so docket_enqueue and
-- inserts in a caller's transaction notify at its commit as before.
--
-- The function is migration 010's with that one parameter: a migration
-- defines a function anew rather than editing an applied one.
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[]);

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.
