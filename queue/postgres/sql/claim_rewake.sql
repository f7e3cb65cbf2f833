-- claim_rewake: right after claim.sql, in its transaction and with a new
-- snapshot, marks claimable again the tenants the claim marked idle that
-- have a pending job after all. $1: the queue.
--
-- With the advisory lock of docket_insert_jobs it closes the lost wake-up:
-- an insert that committed after the claim's snapshot but before the claim
-- took the tenant's lock exclusively is seen here (an insert still in
-- progress kept the claim from marking the tenant idle; one that starts
-- after waits for the claim's commit and sees the tenant idle).
--
-- A tenant that got nothing kept its served_at (it looked empty); one found
-- to have a pending job after all got nothing because another transaction
-- holds its jobs, and moves to the back rather than hold the front of every
-- claim. OFFSET 0 keeps the EXISTS a probe of the fetch index per row, in
-- the index's order: as a semi join, or with a bare EXISTS planned as a
-- sequential scan, it read every pending job of the queue.
UPDATE docket_tenant_queues t SET has_work = true,
    served_at = CASE WHEN t.served_at < now() THEN clock_timestamp() ELSE t.served_at END
WHERE NOT t.has_work AND t.cleared_at >= now() AND t.cleared_by = txid_current_if_assigned()
  AND t.queue = $1
  AND EXISTS (SELECT FROM docket_jobs j WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'pending'
              ORDER BY j.priority DESC, j.id LIMIT 1 OFFSET 0)
