-- after: 004

DROP TRIGGER IF EXISTS docket_tenants_recreated;
CREATE TRIGGER docket_tenants_recreated AFTER INSERT ON docket_tenants
BEGIN
	DELETE FROM docket_tenant_deletions WHERE tenant_id = NEW.id AND finished_at IS NOT NULL;
END;
