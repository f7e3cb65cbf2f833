-- after: 002

-- docket_tenant_lock_key names the advisory lock (class 1684763761, a
-- bucket of 1024) that inserters of pending jobs of a tenant hold shared
-- and that a claim must take exclusively (without waiting) to mark the
-- tenant idle. See postgres/job_claim.go.
CREATE OR REPLACE FUNCTION docket_tenant_lock_key(p_queue text, p_tenant_id text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (hashtextextended(p_queue || '/' || p_tenant_id, 0) & 1023)::int
$$;
