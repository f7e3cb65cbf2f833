-- after: 008

-- A slot row that joins the claimable ones (created, woken, resumed)
-- starts at the queue's virtual time at the earliest: the least vtime of
-- the other rows with work, at their limit or not (a tenant banks no credit while idle). A new
-- row takes its tenant's weight.
DROP TRIGGER IF EXISTS docket_tenant_queues_join;
CREATE TRIGGER docket_tenant_queues_join AFTER INSERT ON docket_tenant_queues
BEGIN
	UPDATE docket_tenant_queues SET
		weight = coalesce((SELECT w.weight FROM docket_tenant_weights w WHERE w.tenant_id = NEW.tenant_id), 1),
		vtime = max(vtime, coalesce((SELECT min(v.vtime) FROM docket_tenant_queues v
			WHERE v.queue = NEW.queue AND v.has_work = 1 AND v.paused = 0
			  AND v.tenant_id <> NEW.tenant_id), 0))
	WHERE queue = NEW.queue AND tenant_id = NEW.tenant_id;
END;

DROP TRIGGER IF EXISTS docket_tenant_queues_wake;
CREATE TRIGGER docket_tenant_queues_wake AFTER UPDATE OF has_work, paused ON docket_tenant_queues
WHEN (NEW.has_work = 1 AND OLD.has_work = 0) OR (OLD.paused = 1 AND NEW.paused = 0)
BEGIN
	UPDATE docket_tenant_queues SET
		vtime = max(vtime, coalesce((SELECT min(v.vtime) FROM docket_tenant_queues v
			WHERE v.queue = NEW.queue AND v.has_work = 1 AND v.paused = 0
			  AND v.tenant_id <> NEW.tenant_id), 0))
	WHERE queue = NEW.queue AND tenant_id = NEW.tenant_id;
END;
