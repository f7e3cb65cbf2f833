-- after: 009

-- docket_enqueue inserts one job (docket_insert_jobs) and returns its id,
-- or the id of the job that already holds its (tenant_id, unique_key).
-- metadata is a JSON object of strings (NULL or {} for none).
CREATE OR REPLACE FUNCTION docket_enqueue(
    queue text, kind text, tenant_id text, args jsonb DEFAULT '{}',
    priority int DEFAULT 0, max_attempts int DEFAULT 3,
    run_at timestamptz DEFAULT NULL, unique_key text DEFAULT NULL,
    metadata jsonb DEFAULT NULL
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT (r.job).id INTO v_id
    FROM docket_insert_jobs(ARRAY[queue], ARRAY[kind], ARRAY[tenant_id], ARRAY[args],
                            ARRAY[priority], ARRAY[max_attempts], ARRAY[run_at],
                            ARRAY[unique_key], ARRAY[NULL::bigint], ARRAY[NULL::boolean],
                            ARRAY[metadata]) r;
    IF v_id IS NULL AND nullif(unique_key, '') IS NOT NULL THEN
        -- A concurrent insert of the same key won; this statement sees it.
        SELECT j.id INTO v_id FROM docket_jobs j
        WHERE j.tenant_id = docket_enqueue.tenant_id AND j.unique_key = docket_enqueue.unique_key;
    END IF;
    RETURN v_id;
END
$$;
