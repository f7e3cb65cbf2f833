-- Docket's queue schema on SQLite: the same tables and semantics as the
-- PostgreSQL driver's. Times are INTEGER unix microseconds, UTC, taken from
-- the one process's wall clock (see the package documentation).

CREATE TABLE docket_jobs (
	id               INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, even after deletes
	queue            TEXT    NOT NULL,
	kind             TEXT    NOT NULL,
	tenant_id        TEXT    NOT NULL,
	args             TEXT    NOT NULL DEFAULT '{}',
	state            TEXT    NOT NULL CHECK (state IN ('scheduled', 'pending', 'running', 'completed', 'failed', 'cancelled')),
	priority         INTEGER NOT NULL DEFAULT 0,
	attempt          INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
	max_attempts     INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
	run_at           INTEGER NOT NULL,
	unique_key       TEXT,    -- NULL: none
	retry_of         INTEGER, -- NULL: none; may name a job since deleted
	fail_on_timeout  INTEGER NOT NULL DEFAULT 0,
	stage            TEXT    NOT NULL DEFAULT '',
	progress         INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
	progress_message TEXT    NOT NULL DEFAULT '',
	error_message    TEXT    NOT NULL DEFAULT '',
	result           TEXT,
	lease_token      INTEGER NOT NULL DEFAULT 0,
	lease_expires_at INTEGER,
	worker_id        TEXT    NOT NULL DEFAULT '',
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	completed_at     INTEGER,
	updated_at       INTEGER NOT NULL
) STRICT;

-- The claim's fetch: a tenant's pending jobs in start order.
CREATE INDEX docket_jobs_fetch ON docket_jobs (queue, tenant_id, priority DESC, id) WHERE state = 'pending';
-- Idempotency keys, unique per tenant.
CREATE UNIQUE INDEX docket_jobs_unique ON docket_jobs (tenant_id, unique_key) WHERE unique_key IS NOT NULL;
-- The rescue sweep.
CREATE INDEX docket_jobs_lease ON docket_jobs (lease_expires_at) WHERE state = 'running';
-- The scheduling sweep.
CREATE INDEX docket_jobs_scheduled ON docket_jobs (run_at) WHERE state = 'scheduled';
-- Retention: finished jobs by age.
CREATE INDEX docket_jobs_finished ON docket_jobs (state, completed_at) WHERE completed_at IS NOT NULL;
-- Recent completions of a queue, for the average duration.
CREATE INDEX docket_jobs_completed ON docket_jobs (queue, completed_at) WHERE state = 'completed';
-- Queue statistics: counts per state, oldest pending.
CREATE INDEX docket_jobs_queue_state ON docket_jobs (queue, state, run_at);
-- A tenant's jobs, newest first.
CREATE INDEX docket_jobs_tenant ON docket_jobs (tenant_id, id);

-- One row per finished attempt. An attempt number can repeat: snoozed and
-- released attempts do not count, so the next claim reuses the number.
CREATE TABLE docket_job_attempts (
	id          INTEGER PRIMARY KEY,
	job_id      INTEGER NOT NULL REFERENCES docket_jobs (id) ON DELETE CASCADE,
	attempt     INTEGER NOT NULL,
	worker_id   TEXT    NOT NULL DEFAULT '',
	started_at  INTEGER NOT NULL,
	finished_at INTEGER NOT NULL,
	outcome     TEXT    NOT NULL,
	error       TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX docket_job_attempts_job ON docket_job_attempts (job_id, id);

-- Per queue and tenant: the running count the limit is checked against,
-- the limit itself (resolved from the tables below), whether the tenant may
-- have pending jobs, and when it was last served (round-robin).
CREATE TABLE docket_tenant_queues (
	queue       TEXT    NOT NULL,
	tenant_id   TEXT    NOT NULL,
	running     INTEGER NOT NULL DEFAULT 0 CHECK (running >= 0),
	max_running INTEGER NOT NULL DEFAULT 1,
	has_work    INTEGER NOT NULL DEFAULT 0,
	served_at   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (queue, tenant_id)
) STRICT, WITHOUT ROWID;

-- The claim's first step: claimable tenants, least recently served first.
-- Idle and saturated tenants are not in it, so its size is the number of
-- tenants that can start a job now.
CREATE INDEX docket_tenant_queues_ready ON docket_tenant_queues (queue, served_at, tenant_id)
	WHERE has_work = 1 AND running < max_running;
CREATE INDEX docket_tenant_queues_tenant ON docket_tenant_queues (tenant_id);

-- Per-tenant limit overrides; queue '' applies to every queue.
CREATE TABLE docket_tenant_limits (
	tenant_id   TEXT    NOT NULL,
	queue       TEXT    NOT NULL DEFAULT '',
	max_running INTEGER NOT NULL CHECK (max_running >= 1),
	PRIMARY KEY (tenant_id, queue)
) STRICT, WITHOUT ROWID;

CREATE TABLE docket_queues (
	queue                TEXT    PRIMARY KEY,
	default_tenant_limit INTEGER NOT NULL DEFAULT 1 CHECK (default_tenant_limit >= 1)
) STRICT, WITHOUT ROWID;

CREATE TABLE docket_leaders (
	name       TEXT    PRIMARY KEY,
	leader_id  TEXT    NOT NULL,
	elected_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
