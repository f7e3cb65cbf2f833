-- Periodic tasks (postgres/periodic.go): one row per task name, the
-- schedule it runs on, the tick due next and the last tick that ran. The
-- maintenance leader advances a row with a compare-and-set on next_run in
-- the same transaction as the tick's job, so a tick runs once across
-- processes. System scope: the docket_app role has no access.
CREATE TABLE docket_periodic (
    name        text PRIMARY KEY CHECK (char_length(name) BETWEEN 1 AND 100),
    schedule    text NOT NULL CHECK (schedule <> ''),
    next_run    timestamptz NOT NULL,
    last_tick   timestamptz,
    last_run_at timestamptz,
    runs        bigint NOT NULL DEFAULT 0,
    missed      bigint NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
