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

-- A tenant's first job in a queue creates its claim row (docket_insert_jobs);
-- the row starts paused when the tenant is.
CREATE FUNCTION docket_tenant_queues_paused() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.paused := EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = NEW.tenant_id);
    RETURN NEW;
END
$$;
CREATE TRIGGER docket_tenant_queues_paused BEFORE INSERT ON docket_tenant_queues
    FOR EACH ROW EXECUTE FUNCTION docket_tenant_queues_paused();

-- Tenant-scoped transactions (docket_app) insert claim rows, so the trigger
-- reads this table as docket_app: it sees its own tenant's row only.
ALTER TABLE docket_tenant_pauses ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_tenant_pauses FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_tenant_pauses TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_tenant_pauses TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
GRANT SELECT ON docket_tenant_pauses TO docket_app;
