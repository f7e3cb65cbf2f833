-- The document service: tenants, API keys, documents, chunks, rate-limit
-- slots and idempotency records; and row-level security, the second wall
-- between tenants, on every table with a tenant_id column (the engine's
-- included).

CREATE TABLE docket_tenants (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,200}$'),
    name        text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 200),
    plan        text NOT NULL CHECK (plan IN ('free', 'starter', 'pro', 'enterprise')),
    concurrency int NOT NULL DEFAULT 1 CHECK (concurrency >= 1),
    rate_limit  int NOT NULL DEFAULT 0 CHECK (rate_limit >= 0),
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- API keys: the public id and a hash, never the key.
CREATE TABLE docket_api_keys (
    id         text PRIMARY KEY CHECK (id <> ''),
    tenant_id  text NOT NULL REFERENCES docket_tenants (id),
    hash       bytea NOT NULL,
    name       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz,
    revoked_at timestamptz
);
CREATE INDEX docket_api_keys_tenant ON docket_api_keys (tenant_id, created_at);

-- Documents. status is the status last recorded; the one shown is derived
-- from the job (job_id) while it exists.
CREATE TABLE docket_documents (
    id           text PRIMARY KEY CHECK (id <> ''),
    tenant_id    text NOT NULL CHECK (tenant_id <> ''),
    filename     text NOT NULL DEFAULT '',
    content_type text NOT NULL DEFAULT '',
    size         bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    sha256       text NOT NULL DEFAULT '',
    blob_key     text NOT NULL DEFAULT '',
    job_id       bigint,
    status       text NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
    fields       jsonb,
    warnings     jsonb NOT NULL DEFAULT '[]',
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- Listing a tenant's documents, newest first.
CREATE INDEX docket_documents_tenant ON docket_documents (tenant_id, created_at DESC, id DESC);

-- Chunks and their vectors (float32, little-endian).
CREATE TABLE docket_chunks (
    tenant_id   text NOT NULL,
    document_id text NOT NULL REFERENCES docket_documents (id) ON DELETE CASCADE,
    idx         int NOT NULL CHECK (idx >= 0),
    text        text NOT NULL,
    page_start  int NOT NULL DEFAULT 0,
    page_end    int NOT NULL DEFAULT 0,
    vector      bytea,
    model       text NOT NULL DEFAULT '',
    dimensions  int NOT NULL DEFAULT 0,
    PRIMARY KEY (document_id, idx)
);
-- Search scans a tenant's vectors of one model.
CREATE INDEX docket_chunks_tenant ON docket_chunks (tenant_id, model, dimensions);

-- Rate-limit slots: one row per event in a tenant's rolling window.
CREATE TABLE docket_rate_slots (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id text NOT NULL,
    at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX docket_rate_slots_tenant ON docket_rate_slots (tenant_id, at);

-- The first response to a request with an Idempotency-Key.
CREATE TABLE docket_idempotency (
    tenant_id    text NOT NULL,
    key          text NOT NULL CHECK (key <> ''),
    request_hash text NOT NULL,
    status_code  int NOT NULL,
    body         bytea NOT NULL,
    document_id  text,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, key)
);

-- The tenant policies' column leads an index on every table.
CREATE INDEX docket_tenant_queues_tenant ON docket_tenant_queues (tenant_id);

-- docket_app is the role of tenant-scoped transactions: it owns nothing,
-- is no superuser and does not bypass row-level security. Roles belong to
-- the cluster, so databases migrating at once may race to create it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'docket_app') THEN
        BEGIN
            CREATE ROLE docket_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOBYPASSRLS;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    -- The owner switches to it inside its transactions (a superuser may
    -- already).
    IF NOT pg_has_role(current_user, 'docket_app', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT docket_app TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
END
$$;

-- Row-level security on every table with a tenant_id column, forced (the
-- owner is subject to it too): docket_app sees and writes only the rows of
-- the tenant the transaction set (set_config('app.tenant_id', id, true));
-- the owner, which runs the engine across tenants, sees every row.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
          AND c.relname LIKE 'docket\_%' AND a.attname = 'tenant_id' AND NOT a.attisdropped
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY docket_tenant ON %I TO docket_app
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, t);
        EXECUTE format('CREATE POLICY docket_owner ON %I TO %I USING (true) WITH CHECK (true)', t, current_user);
    END LOOP;
END
$$;

-- What the tenant-scoped paths need, no more: the document tables, and
-- what queue enqueue (docket_insert_jobs) and completion (finishSQL) touch.
-- Attempts have no tenant column, so docket_app may only add to them.
DO $$
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO docket_app', current_schema());
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON docket_documents TO docket_app;
GRANT SELECT, INSERT, DELETE ON docket_chunks TO docket_app;
GRANT SELECT, INSERT, DELETE ON docket_rate_slots TO docket_app;
GRANT SELECT, INSERT ON docket_idempotency TO docket_app;
GRANT SELECT, INSERT, UPDATE ON docket_jobs, docket_tenant_queues TO docket_app;
GRANT INSERT ON docket_job_attempts TO docket_app;
GRANT SELECT ON docket_tenant_limits, docket_queues TO docket_app;
GRANT USAGE ON SEQUENCE docket_jobs_id_seq, docket_job_attempts_id_seq, docket_rate_slots_id_seq TO docket_app;
GRANT EXECUTE ON FUNCTION docket_tenant_limit(text, text), docket_tenant_lock_key(text, text),
    docket_insert_jobs(text[], text[], text[], jsonb[], int[], int[], timestamptz[], text[], bigint[], boolean[]),
    docket_enqueue(text, text, text, jsonb, int, int, timestamptz, text) TO docket_app;
