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
