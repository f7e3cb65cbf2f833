-- after: 023

-- A child that reaches a final state (a finish, a cancel, a rescue: any
-- statement) counts down its parent's unfinished children, in the same
-- transaction; the last one makes a waiting parent pending. One UPDATE of
-- the parent's row: concurrent ends of its children, and the parent's own
-- finish (JobFinish's waiting outcome, which reads children_open to choose
-- between waiting and pending), lock that row in turn, and under READ
-- COMMITTED each re-evaluates its SET on the version the one before it
-- committed. So whichever comes last sees the count at zero, and the
-- parent leaves waiting exactly once. An AFTER trigger runs once its
-- statement has made all its changes: a batch that ends a parent's attempt
-- and one of its children finds the parent's new version, not the one
-- its snapshot holds.
CREATE OR REPLACE FUNCTION docket_jobs_child_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE docket_jobs p SET
        children_open = greatest(p.children_open - 1, 0),
        state = CASE WHEN p.state = 'waiting' AND p.children_open <= 1 THEN 'pending' ELSE p.state END,
        updated_at = clock_timestamp()
    WHERE p.id = NEW.parent_id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER docket_jobs_child_ended AFTER UPDATE OF state ON docket_jobs
    FOR EACH ROW
    WHEN (NEW.parent_id IS NOT NULL AND NEW.state IN ('completed', 'failed', 'cancelled')
          AND OLD.state NOT IN ('completed', 'failed', 'cancelled'))
    EXECUTE FUNCTION docket_jobs_child_ended();

-- A parent woken (waiting to pending, by its last child's end or by a
-- retry) makes its tenant claimable in its queue, as a job back to pending
-- does (wakeTenantsSQL in tenant_lock.go: the row's update takes the
-- queue's virtual time, docket_tenant_queues_wake), and notifies the
-- queue's claimers at commit. Job row, then tenant row: the lock order of
-- every statement that writes both.
CREATE OR REPLACE FUNCTION docket_jobs_parent_woken() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Lock first, waiting for a claim that may be marking the row idle
    -- from a snapshot without this job; the update, a statement of its
    -- own, then reads the row as that claim left it.
    PERFORM FROM docket_tenant_queues t WHERE t.queue = NEW.queue AND t.tenant_id = NEW.tenant_id
        FOR NO KEY UPDATE;
    UPDATE docket_tenant_queues t SET has_work = true, floor_priority = NULL, floor_id = NULL
    WHERE t.queue = NEW.queue AND t.tenant_id = NEW.tenant_id AND (NOT t.has_work OR t.floor_id IS NOT NULL);
    PERFORM pg_notify('docket_insert', NEW.queue);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER docket_jobs_parent_woken AFTER UPDATE OF state ON docket_jobs
    FOR EACH ROW
    WHEN (OLD.state = 'waiting' AND NEW.state = 'pending')
    EXECUTE FUNCTION docket_jobs_parent_woken();
