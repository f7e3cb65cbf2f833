-- Pause and resume per queue and per tenant (sqlite/pause.go), as on
-- PostgreSQL (postgres/migrations/007_pause.sql).
--
-- A paused queue has paused_at set; the claim reads it once per claim.
ALTER TABLE docket_queues ADD COLUMN paused_at INTEGER;

-- A paused tenant has a row here, and its slot rows (every queue) have
-- paused set, which takes them out of the ready index: a paused tenant
-- costs a claim what an idle one does.
CREATE TABLE docket_tenant_pauses (
	tenant_id TEXT    PRIMARY KEY,
	paused_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

ALTER TABLE docket_tenant_queues ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;

DROP INDEX docket_tenant_queues_ready;
CREATE INDEX docket_tenant_queues_ready ON docket_tenant_queues (queue, served_at, tenant_id)
	WHERE has_work = 1 AND running < max_running AND paused = 0;

-- trigger docket_tenant_queues_paused: its current definition is repeatable/tenant_queues_paused.sql.
