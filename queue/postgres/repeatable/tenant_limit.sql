-- after: 002

-- docket_tenant_limit is the concurrency limit of a tenant in a queue: its
-- override for the queue, else its override for every queue, else the
-- queue's default, else 1.
CREATE OR REPLACE FUNCTION docket_tenant_limit(p_queue text, p_tenant_id text) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT max_running FROM docket_tenant_limits WHERE tenant_id = p_tenant_id AND queue = p_queue),
        (SELECT max_running FROM docket_tenant_limits WHERE tenant_id = p_tenant_id AND queue = ''),
        (SELECT default_tenant_limit FROM docket_queues WHERE name = p_queue),
        1)
$$;
