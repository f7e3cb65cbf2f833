-- Tenant slots held by cancelled attempts whose handlers may still run, as
-- on PostgreSQL (postgres/migrations/021_slot_holds.sql): a cancel leaves
-- the slot counted in docket_tenant_queues.running until the worker says
-- the handler returned (JobSlotRelease) or expires_at (microseconds, the
-- lease's expiry at the cancel) passes and the rescue sweep frees it.
CREATE TABLE docket_slot_holds (
    job_id      INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    lease_token INTEGER NOT NULL CHECK (lease_token <> 0),
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (job_id, attempt)
) STRICT;

CREATE INDEX docket_slot_holds_expiry ON docket_slot_holds (expires_at);
