-- Enqueueing, in SQL so that Go, triggers and other languages share one
-- implementation.

-- function docket_tenant_limit: its current definition is repeatable/tenant_limit.sql.

-- function docket_tenant_lock_key: its current definition is repeatable/tenant_lock_key.sql.

-- function docket_insert_jobs: its current definition is repeatable/insert_jobs.sql.

-- function docket_enqueue: its current definition is repeatable/enqueue.sql.
