-- Tenant deletion (postgres/docs_tenant_delete.go, docket/tenant_delete.go).
--
-- A row here is a tenant's tombstone: written when its deletion begins,
-- finished_at set when the purge has removed everything. It outlives the
-- tenant row, so that:
--   - the tenant reads stay hidden while the purge runs (TenantGet,
--     TenantList and TenantUpdate skip a tenant with a row here);
--   - an upload that authenticated before the deletion (a cached key) but
--     commits after it is refused: RateLimitTake, which every upload takes
--     under the tenant's advisory lock, reads this table as docket_app.
-- TenantCreate of the same id clears a finished row (ids are random; this
-- only matters to tests and hand-made ids).
CREATE TABLE docket_tenant_deletions (
    tenant_id   text PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz
);

-- Row-level security as on every table with a tenant_id column: a tenant
-- transaction sees its own tenant's row only.
ALTER TABLE docket_tenant_deletions ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_tenant_deletions FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_tenant_deletions TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_tenant_deletions TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
GRANT SELECT ON docket_tenant_deletions TO docket_app;


-- function docket_tenants_recreated: its current definition is repeatable/tenants_recreated.sql.
-- trigger docket_tenants_recreated: its current definition is repeatable/tenants_recreated.sql.
