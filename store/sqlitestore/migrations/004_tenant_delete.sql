-- Tenant deletion (sqlite/docs_tenant_delete.go, docket/tenant_delete.go),
-- as on PostgreSQL (postgres/migrations/013_tenant_delete.sql).
--
-- A row here is a tenant's tombstone: written when its deletion begins,
-- finished_at set when the purge has removed everything. While it is here
-- the tenant reads skip the tenant and RateLimitTake (every upload takes
-- one) refuses it; once the tenant row is gone the foreign keys refuse its
-- documents as well. TenantCreate of the same id clears a finished row.
CREATE TABLE docket_tenant_deletions (
	tenant_id   TEXT    PRIMARY KEY,
	started_at  INTEGER NOT NULL,
	finished_at INTEGER
) STRICT, WITHOUT ROWID;

-- trigger docket_tenants_recreated: its current definition is repeatable/tenants_recreated.sql.
