-- Row-level security on the engine's docket_tenant_pauses (engine
-- migration 006), as on every table with a tenant_id column.
-- Tenant-scoped transactions (docket_app) insert claim rows, so the trigger
-- reads this table as docket_app: it sees its own tenant's row only.
ALTER TABLE docket_tenant_pauses ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_tenant_pauses FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_tenant_pauses TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_tenant_pauses TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
GRANT SELECT ON docket_tenant_pauses TO docket_app;
