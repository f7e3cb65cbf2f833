-- A tenant's own weight in the document queue's fair shares, which
-- overrides its plan's (docket.Tenant.Weight); 0: the plan's. A column
-- with a constant default is added without rewriting the table, but the
-- CHECK reads every row once under the ACCESS EXCLUSIVE lock the ALTER
-- takes: docket_tenants is one row a tenant. It needs no grant or policy:
-- docket_tenants is system scope, read and written by the owner only
-- (docket_app has no privilege on it).
ALTER TABLE docket_tenants ADD COLUMN weight int NOT NULL DEFAULT 0 CHECK (weight >= 0);
