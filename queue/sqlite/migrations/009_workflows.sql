-- Workflows, as on PostgreSQL (postgres/migrations/023_workflows.sql): a
-- child's parent_id, a parent's count of unfinished children, and the
-- state waiting.
ALTER TABLE docket_jobs ADD COLUMN parent_id INTEGER;
ALTER TABLE docket_jobs ADD COLUMN children_open INTEGER NOT NULL DEFAULT 0;

-- SQLite cannot alter a CHECK. Widening one (every row satisfies the new
-- one) may be written into the schema's text, the documented shortcut for
-- constraint changes that existing rows cannot break
-- (https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table
-- Schema Changes"). RESET reloads this connection's schema; the CREATE
-- INDEX below changes the schema cookie, so every other connection reloads
-- its own.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, '''cancelled''))', '''cancelled'', ''waiting''))')
WHERE type = 'table' AND name = 'docket_jobs';
PRAGMA writable_schema = RESET;

-- A parent's children. Partial: most jobs have no parent.
CREATE INDEX docket_jobs_parent ON docket_jobs (parent_id, id) WHERE parent_id IS NOT NULL;

-- triggers docket_jobs_child_ended, docket_jobs_parent_woken: their
-- current definitions are repeatable/workflow.sql.
