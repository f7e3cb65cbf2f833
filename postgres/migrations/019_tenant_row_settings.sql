-- A tenant's claim row takes its pause and its limit under the settings
-- lock (issue 9, found by review). docket_insert_jobs creates a tenant's
-- row in a queue with its first job there; the row copied the tenant's
-- pause (trigger docket_tenant_queues_paused) and its limit
-- (docket_tenant_limit in the insert) from the insert's snapshot. A resume
-- or a limit change committed while that insert was in progress updated
-- every row of the tenant but the new one, which it could not see: the
-- tenant stayed paused in that queue for good after its resume, or kept
-- the old limit and ran more jobs at once than its new one allowed. An
-- insert inside an application's transaction (EnqueueTx) kept that window
-- open for the whole transaction.
--
-- Now every change of a pause or a limit holds the settings lock (an
-- advisory lock, class 1684763763, key 0) exclusively to its commit, and
-- this trigger takes it shared before it reads the pause and the limit,
-- in statements of their own: the trigger function is volatile, so each
-- of its statements has a new snapshot. A change therefore waits for the
-- inserts creating rows to commit, and then sees their rows; an insert
-- that creates a row after the change took the lock waits for the change
-- to commit, and then reads the new pause and limit. Rows are created once
-- per tenant and queue, so the lock is rarely taken, and shared locks do
-- not wait for each other.
CREATE FUNCTION docket_tenant_queues_settings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1684763763, 0);
    SELECT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = NEW.tenant_id)
      INTO NEW.paused;
    SELECT docket_tenant_limit(NEW.queue, NEW.tenant_id) INTO NEW.max_running;
    RETURN NEW;
END
$$;

DROP TRIGGER docket_tenant_queues_paused ON docket_tenant_queues;
DROP FUNCTION docket_tenant_queues_paused();
CREATE TRIGGER docket_tenant_queues_settings BEFORE INSERT ON docket_tenant_queues
    FOR EACH ROW EXECUTE FUNCTION docket_tenant_queues_settings();
