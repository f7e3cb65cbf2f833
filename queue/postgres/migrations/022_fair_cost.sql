-- Fairness by cost, weighted per tenant (docs/claiming.md, "Fair shares").
--
-- A job declares a cost (>= 1, default 1). A tenant has a weight (>= 1,
-- default 1; docket_tenant_weights holds the overrides, copied into its
-- claim rows like the limit). Each claim row keeps a virtual time, vtime:
-- the claim serves the claimable rows in vtime order and advances a
-- row's vtime by the cost it took divided by the weight. With every cost
-- and weight 1 it counts jobs, and ties fall back to served_at: the
-- round-robin of before. ADD COLUMN with a constant default rewrites
-- nothing; the cost's CHECK is NOT VALID (old rows hold the default).
ALTER TABLE docket_jobs ADD COLUMN cost int NOT NULL DEFAULT 1;
ALTER TABLE docket_jobs ADD CONSTRAINT docket_jobs_cost CHECK (cost >= 1) NOT VALID;

CREATE TABLE docket_tenant_weights (
    tenant_id text PRIMARY KEY,
    weight    int NOT NULL CHECK (weight >= 1)
);

ALTER TABLE docket_tenant_queues ADD COLUMN weight int NOT NULL DEFAULT 1;
ALTER TABLE docket_tenant_queues ADD COLUMN vtime double precision NOT NULL DEFAULT 0;

-- The claimable rows in the claim's order: least virtual time first.
DROP INDEX docket_tenant_queues_claimable;
CREATE INDEX docket_tenant_queues_claimable ON docket_tenant_queues (queue, vtime, served_at, tenant_id)
    WHERE has_work AND running < max_running AND NOT paused;

-- The rows with work, least virtual time first, at their limit or not:
-- docket_queue_vtime's probe (a tenant at its limit is still backlogged).
CREATE INDEX docket_tenant_queues_active ON docket_tenant_queues (queue, vtime)
    WHERE has_work AND NOT paused;

-- function docket_tenant_queues_settings, function and trigger
-- docket_tenant_queues_wake: their current definitions are
-- repeatable/tenant_queues_settings.sql. docket_insert_jobs gains p_cost
-- (repeatable/insert_jobs.sql), a new signature: the old one goes (both
-- would match a call that leaves the defaults out).
DROP FUNCTION IF EXISTS docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[], jsonb[], boolean);
