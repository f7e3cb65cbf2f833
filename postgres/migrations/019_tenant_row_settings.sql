-- A tenant's claim row takes its pause and its limit under the settings
-- locks. docket_insert_jobs creates a tenant's
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
-- The settings locks are advisory locks: class 1684763763 keyed by the
-- tenant, class 1684763764 keyed by the queue, each in 32 buckets of the
-- name's hash (a transaction that creates the rows of 10^5 new tenants
-- takes 64 locks at most, not 2 x 10^5 slots of the server's shared lock
-- table, which such an insert ran out of). A change of a tenant's
-- pause or limit holds its tenant's exclusively to its commit, a change
-- of a queue's default limit its queue's (postgres/tenant.go); this
-- trigger takes both of the new row's shared, then reads the pause and
-- the limit in statements of their own: the trigger function is volatile,
-- so under READ COMMITTED each has a new snapshot. A change therefore
-- waits for the inserts creating rows of its tenant (queue) to commit, and
-- then sees their rows; an insert that creates a row after the change took
-- the lock waits for the change to commit, and then reads the new pause
-- and limit. Rows are created once per tenant and queue, so inserts rarely
-- take the locks, and wait for a change of another tenant only when the
-- two share a bucket.
CREATE FUNCTION docket_tenant_queues_settings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1684763763, hashtext(NEW.tenant_id) & 31);
    PERFORM pg_advisory_xact_lock_shared(1684763764, hashtext(NEW.queue) & 31);
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
