-- Row-level security on the engine's docket_tenant_weights (engine
-- migration 022), as on every table with a tenant_id column: the trigger
-- that creates a claim row reads its tenant's weight as docket_app in
-- tenant-scoped transactions, and sees its own tenant's row only.
ALTER TABLE docket_tenant_weights ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_tenant_weights FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_tenant_weights TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_tenant_weights TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
GRANT SELECT ON docket_tenant_weights TO docket_app;
