-- Workflows (docs/library.md, "Workflows"): a running job spawns child
-- jobs and may wait, holding no slot, until they have all finished.
--
-- parent_id names a child's parent; children_open counts a parent's
-- children not yet finished, changed only by single-row updates of the
-- parent (a spawn adds, a child's end subtracts: the triggers of
-- repeatable/workflow.sql), so its row lock orders them and each sees the
-- last one's count. A new state, waiting: a parent that returned
-- AwaitChildren while children were open. ADD COLUMN with a constant
-- default rewrites nothing; the widened state CHECK is NOT VALID (every
-- existing row satisfies it, and validating would scan the table).
ALTER TABLE docket_jobs ADD COLUMN parent_id bigint;
ALTER TABLE docket_jobs ADD COLUMN children_open int NOT NULL DEFAULT 0;
ALTER TABLE docket_jobs DROP CONSTRAINT docket_jobs_state_check,
    ADD CONSTRAINT docket_jobs_state_check CHECK (
        state IN ('scheduled', 'pending', 'running', 'completed', 'failed', 'cancelled', 'waiting')) NOT VALID;

-- A parent's children (JobChildren, the cancel's cascade, the retry).
-- Partial: the jobs without a parent, most of them, are not in it.
CREATE INDEX docket_jobs_parent ON docket_jobs (parent_id, id) WHERE parent_id IS NOT NULL;

-- functions and triggers docket_jobs_child_ended, docket_jobs_parent_woken:
-- their current definitions are repeatable/workflow.sql.
