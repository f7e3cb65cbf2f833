-- after: 009

-- A child that reaches a final state (a finish, a cancel, a rescue) counts
-- down its parent's unfinished children in the same transaction; the last
-- one makes a waiting parent pending (postgres/repeatable/workflow.sql).
-- SQLite has one writer, so nothing runs between the two.
DROP TRIGGER IF EXISTS docket_jobs_child_ended;
CREATE TRIGGER docket_jobs_child_ended AFTER UPDATE OF state ON docket_jobs
WHEN NEW.parent_id IS NOT NULL AND NEW.state IN ('completed', 'failed', 'cancelled')
	AND OLD.state NOT IN ('completed', 'failed', 'cancelled')
BEGIN
	UPDATE docket_jobs SET
		children_open = max(children_open - 1, 0),
		state = CASE WHEN state = 'waiting' AND children_open <= 1 THEN 'pending' ELSE state END,
		updated_at = NEW.updated_at
	WHERE id = NEW.parent_id;
END;

-- A parent woken makes its tenant claimable in its queue (and takes the
-- queue's virtual time: docket_tenant_queues_wake).
DROP TRIGGER IF EXISTS docket_jobs_parent_woken;
CREATE TRIGGER docket_jobs_parent_woken AFTER UPDATE OF state ON docket_jobs
WHEN OLD.state = 'waiting' AND NEW.state = 'pending'
BEGIN
	UPDATE docket_tenant_queues SET has_work = 1
	WHERE queue = NEW.queue AND tenant_id = NEW.tenant_id AND has_work = 0;
END;
