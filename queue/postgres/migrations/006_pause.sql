-- Pause and resume per queue and per tenant (postgres/pause.go).
--
-- A paused queue has paused_at set on its docket_queues row; the claim
-- reads it once per statement (one primary-key probe) and claims nothing.
ALTER TABLE docket_queues ADD COLUMN paused_at timestamptz;

-- A paused tenant has a row here, and its claim rows (every queue) have
-- paused set, which takes them out of the claimable index: a paused tenant
-- costs a claim what an idle one does. The claim checks this table as well,
-- for a row created by an insert whose snapshot predates the pause.
CREATE TABLE docket_tenant_pauses (
    tenant_id text PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE docket_tenant_queues ADD COLUMN paused boolean NOT NULL DEFAULT false;

DROP INDEX docket_tenant_queues_claimable;
CREATE INDEX docket_tenant_queues_claimable ON docket_tenant_queues (queue, served_at, tenant_id)
    WHERE has_work AND running < max_running AND NOT paused;

-- (function docket_tenant_queues_paused: dropped by a later migration)
-- (trigger docket_tenant_queues_paused: dropped by a later migration)
