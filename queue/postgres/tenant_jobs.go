package postgres

// The statements a store uses to delete a tenant's jobs
// (store/pgstore/docs_tenant_delete.go). They are here, beside
// jobListSQL, because they depend on which index holds a tenant's jobs in
// which state: docket_jobs_tenant the scheduled and finished ones
// (migrations 014 and 017), the fetch index the pending ones (every
// pending job's queue has a claim row of its tenant, docket_insert_jobs),
// docket_jobs_lease the running ones.

// TenantJobsDeleteSQL deletes at most $2 of tenant $1's jobs that are not
// running, and their attempt records, locking them in id order first. A
// job that started running since it was picked is left alone.
const TenantJobsDeleteSQL = `
WITH picked AS (
    (SELECT id FROM docket_jobs
     WHERE tenant_id = $1 AND state NOT IN ('pending', 'running') ORDER BY id LIMIT $2)
    UNION ALL
    (SELECT p.id FROM docket_tenant_queues q CROSS JOIN LATERAL (
        SELECT id FROM docket_jobs WHERE state = 'pending' AND queue = q.queue AND tenant_id = $1 LIMIT $2) p
     WHERE q.tenant_id = $1)
), j AS (
    SELECT id FROM docket_jobs
    WHERE id IN (SELECT id FROM picked ORDER BY id LIMIT $2) AND state <> 'running'
    ORDER BY id FOR UPDATE
), a AS (
    DELETE FROM docket_job_attempts WHERE job_id IN (SELECT id FROM j)
)
DELETE FROM docket_jobs WHERE id IN (SELECT id FROM j)`

// TenantJobsRemainSQL reports whether tenant $1 has a job left, running
// or not.
const TenantJobsRemainSQL = `
SELECT EXISTS (SELECT FROM docket_jobs WHERE tenant_id = $1 AND state NOT IN ('pending', 'running'))
    OR EXISTS (SELECT FROM docket_tenant_queues q
               WHERE q.tenant_id = $1
                 AND EXISTS (SELECT FROM docket_jobs j WHERE j.state = 'pending' AND j.queue = q.queue AND j.tenant_id = $1))
    OR EXISTS (SELECT FROM docket_jobs WHERE tenant_id = $1 AND state = 'running')`
