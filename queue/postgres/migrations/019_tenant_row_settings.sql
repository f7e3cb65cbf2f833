-- function docket_tenant_queues_settings: its current definition is repeatable/tenant_queues_settings.sql.

DROP TRIGGER IF EXISTS docket_tenant_queues_paused ON docket_tenant_queues;
DROP FUNCTION IF EXISTS docket_tenant_queues_paused();
-- trigger docket_tenant_queues_settings: its current definition is repeatable/tenant_queues_settings.sql.
