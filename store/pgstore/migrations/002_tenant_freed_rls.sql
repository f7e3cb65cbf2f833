-- Row-level security on the engine's docket_tenant_freed (engine migration
-- 004), as on every table with a tenant_id column.
ALTER TABLE docket_tenant_freed ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_tenant_freed FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_tenant_freed TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_tenant_freed TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;

-- A job completed in a tenant's own transaction (Task.CompleteTx under
-- docket_app) records its freed slot here, and a queue position read there
-- counts the slots not yet folded in.
GRANT SELECT, INSERT ON docket_tenant_freed TO docket_app;
