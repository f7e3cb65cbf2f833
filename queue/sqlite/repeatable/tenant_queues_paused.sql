-- after: 003

-- A tenant's first job in a queue creates its slot row (sqlMarkWork); the
-- row starts paused when the tenant is.
DROP TRIGGER IF EXISTS docket_tenant_queues_paused;
CREATE TRIGGER docket_tenant_queues_paused AFTER INSERT ON docket_tenant_queues
WHEN EXISTS (SELECT 1 FROM docket_tenant_pauses p WHERE p.tenant_id = NEW.tenant_id)
BEGIN
	UPDATE docket_tenant_queues SET paused = 1 WHERE queue = NEW.queue AND tenant_id = NEW.tenant_id;
END;
