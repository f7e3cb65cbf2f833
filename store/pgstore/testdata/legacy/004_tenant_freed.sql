-- Slots freed by finishes and rescues, not yet subtracted from their
-- tenant's running counter. A finish inserts one row per tenant instead of
-- updating the tenant's docket_tenant_queues row, so it never waits for a
-- claim that holds that row and a claim never skips a row because a finish
-- holds it. The next claim of the queue folds the rows in (deletes them and
-- subtracts their sum) while it holds the tenant row; until then running
-- over-counts, so a tenant's limit can only be under-used, never exceeded.
CREATE TABLE docket_tenant_freed (
    tenant_id text NOT NULL,
    queue     text NOT NULL,
    n         int NOT NULL CHECK (n > 0)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

CREATE INDEX docket_tenant_freed_tenant ON docket_tenant_freed (tenant_id, queue);

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
