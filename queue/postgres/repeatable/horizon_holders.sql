-- after: 008

-- Sessions that hold back vacuum's horizon in this database
-- (postgres/monitor.go, Driver.HorizonHolders; docs/reliability.md, the
-- horizon pin): each open transaction with a transaction id or a snapshot keeps
-- vacuum from removing the row versions that died after it began, so one
-- session left idle in transaction lets every job update pile up as dead
-- rows (claims slow down, the jobs table and its indexes bloat). Oldest
-- first; the reader's own session and autovacuum are left out.
-- xid_age is how many transaction ids ago the oldest of its transaction id
-- and snapshot was taken; transaction_age_seconds how long ago its
-- transaction began; state_age_seconds how long it has been in its state
-- ('idle in transaction': since its last statement).
-- A role that is not a superuser sees other roles' sessions here only with
-- pg_read_all_stats (pg_monitor): the columns are null otherwise, and the
-- row is left out.
CREATE OR REPLACE VIEW docket_horizon_holders WITH (security_invoker = true) AS
SELECT pid, usename::text AS user_name, coalesce(application_name, '') AS application_name,
       coalesce(host(client_addr), '') AS client_addr, coalesce(state, '') AS state,
       greatest(coalesce(age(backend_xid), 0), coalesce(age(backend_xmin), 0))::bigint AS xid_age,
       extract(epoch FROM greatest(now() - xact_start, interval '0'))::float8 AS transaction_age_seconds,
       extract(epoch FROM greatest(now() - state_change, interval '0'))::float8 AS state_age_seconds,
       xact_start
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND backend_type <> 'autovacuum worker'
  AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)
  AND xact_start IS NOT NULL;
