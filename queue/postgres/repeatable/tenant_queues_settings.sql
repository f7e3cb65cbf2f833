-- after: 022

-- A tenant's claim row, created by docket_insert_jobs with the tenant's
-- first job in a queue, takes the tenant's pause and limit under the
-- settings locks, so that a pause, resume or limit change committed while
-- the insert was in progress (for a whole application transaction with
-- EnqueueTx) is never missed for the new row.
--
-- The settings locks are advisory: class 1684763763 keyed by the tenant,
-- class 1684763764 keyed by the queue, each in 32 buckets of the name's
-- hash (creating the rows of 10^5 new tenants takes at most 64 locks, not
-- 2 x 10^5 slots of the server's shared lock table). A change of a
-- tenant's pause or limit holds its tenant's exclusively to its commit, a
-- change of a queue's default limit its queue's (postgres/tenant.go). This
-- trigger takes both of the new row's shared, then reads the pause and the
-- limit in statements of their own: the function is volatile, so under
-- READ COMMITTED each has a new snapshot. A change thus waits for the
-- inserts creating rows of its tenant (queue) and then sees their rows; an
-- insert that creates a row after a change took the lock waits for it and
-- reads the new settings.
-- docket_queue_vtime is the virtual time of a queue: the least vtime of
-- its rows with work, at their limit or not (one probe of the index
-- docket_tenant_queues_active), 0 when none. A row that joins them (a new
-- row, a wake-up, a resume) starts there at the earliest: a tenant banks
-- no credit while idle, so its return is no burst. (Rows at their limit
-- count: without them a new row could start behind an emptied row that a
-- fold of freed slots makes claimable, and the next claim of one job
-- would spend itself marking that row idle.) It runs as its owner: a role under row-level
-- security on docket_tenant_queues (the document service's tenant role)
-- would see its own tenant's rows only, and the number it returns tells
-- nothing of any one tenant.
CREATE OR REPLACE FUNCTION docket_queue_vtime(p_queue text) RETURNS double precision
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT coalesce((SELECT tq.vtime FROM docket_tenant_queues tq
                     WHERE tq.queue = p_queue AND tq.has_work AND NOT tq.paused
                     ORDER BY tq.vtime LIMIT 1), 0)
$$;

CREATE OR REPLACE FUNCTION docket_tenant_queues_settings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1684763763, hashtext(NEW.tenant_id) & 31);
    PERFORM pg_advisory_xact_lock_shared(1684763764, hashtext(NEW.queue) & 31);
    SELECT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = NEW.tenant_id)
      INTO NEW.paused;
    SELECT docket_tenant_limit(NEW.queue, NEW.tenant_id) INTO NEW.max_running;
    SELECT coalesce((SELECT w.weight FROM docket_tenant_weights w WHERE w.tenant_id = NEW.tenant_id), 1)
      INTO NEW.weight;
    NEW.vtime := greatest(NEW.vtime, docket_queue_vtime(NEW.queue));
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER docket_tenant_queues_settings BEFORE INSERT ON docket_tenant_queues
    FOR EACH ROW EXECUTE FUNCTION docket_tenant_queues_settings();

-- A row woken (has_work set) or resumed takes the queue's virtual time if
-- its own is behind (docket_queue_vtime). The WHEN clause keeps every
-- other update, the claim's among them, from calling the function.
CREATE OR REPLACE FUNCTION docket_tenant_queues_wake() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.vtime := greatest(NEW.vtime, docket_queue_vtime(NEW.queue));
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER docket_tenant_queues_wake BEFORE UPDATE ON docket_tenant_queues
    FOR EACH ROW WHEN ((NEW.has_work AND NOT OLD.has_work) OR (OLD.paused AND NOT NEW.paused))
    EXECUTE FUNCTION docket_tenant_queues_wake();
