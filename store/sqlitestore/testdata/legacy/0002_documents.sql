-- The document service's tables (package docket's Store) on SQLite: the
-- same logical schema as the PostgreSQL driver's. SQLite has no row-level
-- security: every statement of the driver names tenant_id, and that filter
-- is the only wall between tenants. Times are INTEGER unix microseconds.

CREATE TABLE docket_tenants (
	id          TEXT    PRIMARY KEY,
	name        TEXT    NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
	plan        TEXT    NOT NULL CHECK (plan IN ('free', 'starter', 'pro', 'enterprise')),
	concurrency INTEGER NOT NULL DEFAULT 1 CHECK (concurrency >= 1),
	rate_limit  INTEGER NOT NULL DEFAULT 0 CHECK (rate_limit >= 0), -- 0: the plan's
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;

-- API keys: the public id and a SHA-256 of the whole key, never the key.
CREATE TABLE docket_api_keys (
	id         TEXT    PRIMARY KEY,
	tenant_id  TEXT    NOT NULL REFERENCES docket_tenants (id) ON DELETE CASCADE,
	hash       BLOB    NOT NULL,
	name       TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	expires_at INTEGER, -- NULL: never
	revoked_at INTEGER  -- NULL: not revoked
) STRICT;

CREATE INDEX docket_api_keys_tenant ON docket_api_keys (tenant_id, created_at, id);

-- Documents. job_id names the current processing job but is no foreign
-- key: retention deletes finished jobs, and then status (recorded by the
-- pipeline) is what the document shows.
CREATE TABLE docket_documents (
	id           TEXT    PRIMARY KEY,
	tenant_id    TEXT    NOT NULL REFERENCES docket_tenants (id) ON DELETE CASCADE,
	filename     TEXT    NOT NULL,
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL CHECK (size >= 0),
	sha256       TEXT    NOT NULL,
	blob_key     TEXT    NOT NULL,
	job_id       INTEGER NOT NULL DEFAULT 0,
	status       TEXT    NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
	fields       TEXT,   -- JSON of docket.Fields; NULL until analysed
	warnings     TEXT,   -- JSON array; NULL until processed
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
) STRICT;

-- A tenant's documents, newest first (the listing and its cursor).
CREATE INDEX docket_documents_list ON docket_documents (tenant_id, created_at DESC, id DESC);
-- The document of a job.
CREATE INDEX docket_documents_job ON docket_documents (job_id);

-- Chunks and their vectors (float32, little-endian), deleted with their
-- document.
CREATE TABLE docket_chunks (
	document_id TEXT    NOT NULL REFERENCES docket_documents (id) ON DELETE CASCADE,
	idx         INTEGER NOT NULL CHECK (idx >= 0),
	tenant_id   TEXT    NOT NULL,
	text        TEXT    NOT NULL,
	page_start  INTEGER NOT NULL DEFAULT 0,
	page_end    INTEGER NOT NULL DEFAULT 0,
	model       TEXT    NOT NULL DEFAULT '',
	dimensions  INTEGER NOT NULL DEFAULT 0,
	vector      BLOB,
	PRIMARY KEY (document_id, idx)
) STRICT;

-- A search's scan: the tenant's vectors of one model and size.
CREATE INDEX docket_chunks_scan ON docket_chunks (tenant_id, model, dimensions);

-- Rate-limit slots: one row per upload in a tenant's rolling window. Ids
-- are never reused, so refunding an old slot cannot free a newer one.
CREATE TABLE docket_rate_slots (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	tenant_id TEXT    NOT NULL REFERENCES docket_tenants (id) ON DELETE CASCADE,
	taken_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX docket_rate_slots_tenant ON docket_rate_slots (tenant_id, taken_at);

-- The first response to a request with an Idempotency-Key.
CREATE TABLE docket_idempotency (
	tenant_id    TEXT    NOT NULL REFERENCES docket_tenants (id) ON DELETE CASCADE,
	key          TEXT    NOT NULL,
	request_hash TEXT    NOT NULL,
	status_code  INTEGER NOT NULL,
	body         BLOB    NOT NULL,
	document_id  TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (tenant_id, key)
) STRICT, WITHOUT ROWID;
