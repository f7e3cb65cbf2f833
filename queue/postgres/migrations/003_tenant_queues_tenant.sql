-- A tenant's claim rows in every queue: pausing or deleting a tenant
-- reads them by tenant_id alone, and the document store's tenant policies
-- (row-level security) lead with the same column. From the single
-- sequence's 003_documents.sql.
CREATE INDEX docket_tenant_queues_tenant ON docket_tenant_queues (tenant_id);
