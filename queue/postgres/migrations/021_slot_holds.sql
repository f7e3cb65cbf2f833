-- Tenant slots held by cancelled attempts whose handlers may still run.
-- Cancelling a running job ends its attempt at once but leaves the slot
-- counted in docket_tenant_queues.running, and records the attempt here:
-- its worker deletes the row and frees the slot (JobSlotRelease) once the
-- handler has returned, or the rescue sweep does once expires_at (the
-- lease's expiry at the cancel) has passed, so a retry never runs beside a
-- handler that ignores its cancellation. No tenant_id: the job row names
-- the tenant, and the retention sweep keeps a job while it has a row here.
CREATE TABLE docket_slot_holds (
    job_id      bigint NOT NULL,
    attempt     int NOT NULL,
    lease_token bigint NOT NULL CHECK (lease_token <> 0),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (job_id, attempt)
);

CREATE INDEX docket_slot_holds_expiry ON docket_slot_holds (expires_at);
