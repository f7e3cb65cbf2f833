-- A tenant's own weight in the document queue's fair shares, which
-- overrides its plan's (docket.Tenant.Weight); 0: the plan's. Adding a
-- column with a constant default rewrites no row: only the table's
-- definition in sqlite_master changes, and the CHECK holds for the default.
ALTER TABLE docket_tenants ADD COLUMN weight INTEGER NOT NULL DEFAULT 0 CHECK (weight >= 0); -- 0: the plan's
