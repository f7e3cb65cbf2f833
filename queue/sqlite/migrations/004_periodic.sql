-- Periodic tasks (sqlite/periodic.go): one row per task name, the schedule
-- it runs on, the tick due next and the last tick that ran. The
-- maintenance leader advances a row with a compare-and-set on next_run in
-- the same write transaction as the tick's job. Times are unix
-- microseconds.
CREATE TABLE docket_periodic (
	name        TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 100),
	schedule    TEXT    NOT NULL CHECK (schedule <> ''),
	next_run    INTEGER NOT NULL,
	last_tick   INTEGER, -- NULL: no tick ran yet
	last_run_at INTEGER,
	runs        INTEGER NOT NULL DEFAULT 0,
	missed      INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
