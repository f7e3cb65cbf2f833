-- Fairness by cost, weighted per tenant, as on PostgreSQL
-- (postgres/migrations/022_fair_cost.sql): a job's cost, a tenant's weight
-- (overrides in docket_tenant_weights, copied into its slot rows), and
-- each slot row's virtual time, the claim's order.
ALTER TABLE docket_jobs ADD COLUMN cost INTEGER NOT NULL DEFAULT 1 CHECK (cost >= 1);

CREATE TABLE docket_tenant_weights (
	tenant_id TEXT    PRIMARY KEY,
	weight    INTEGER NOT NULL CHECK (weight >= 1)
) STRICT, WITHOUT ROWID;

ALTER TABLE docket_tenant_queues ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;
ALTER TABLE docket_tenant_queues ADD COLUMN vtime REAL NOT NULL DEFAULT 0;

DROP INDEX docket_tenant_queues_ready;
CREATE INDEX docket_tenant_queues_ready ON docket_tenant_queues (queue, vtime, served_at, tenant_id)
	WHERE has_work = 1 AND running < max_running AND paused = 0;

-- The rows with work, at their limit or not: the triggers' probe of the
-- queue's virtual time.
CREATE INDEX docket_tenant_queues_active ON docket_tenant_queues (queue, vtime)
	WHERE has_work = 1 AND paused = 0;

-- triggers docket_tenant_queues_join, docket_tenant_queues_wake: their
-- current definitions are repeatable/tenant_queues_fair.sql.
