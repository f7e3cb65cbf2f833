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

-- A tenant's first job in a queue creates its slot row (sqlMarkWork); the
-- row starts paused when the tenant is.
CREATE TRIGGER docket_tenant_queues_paused AFTER INSERT ON docket_tenant_queues
WHEN EXISTS (SELECT 1 FROM docket_tenant_pauses p WHERE p.tenant_id = NEW.tenant_id)
BEGIN
	UPDATE docket_tenant_queues SET paused = 1 WHERE queue = NEW.queue AND tenant_id = NEW.tenant_id;
END;
