package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// claimSQL claims jobs in one statement. Parameters: $1 queue, $2 max,
// $3 lease in microseconds, $4 worker id.
//
//   - tenants: the least recently served claimable tenants of the queue,
//     locked; none while the queue is paused (a one-time probe of
//     docket_queues), and no paused tenant (pause.go). SKIP LOCKED lets concurrent claimers take other tenants; under
//     READ COMMITTED a row changed since the statement's snapshot is
//     re-checked on its newest version, so running < max_running holds for
//     every row locked here, whatever the race.
//   - picked: each tenant's next jobs from the fetch index, at most its free
//     slots and at most ceil(max / tenants), locked. The index scan starts
//     at the tenant's claim floor (see floorSQL), past the entries of the
//     jobs claimed before, which stay in the index until VACUUM. SKIP LOCKED again: a
//     job pending in our snapshot may since have been claimed by a
//     transaction that committed, and now be locked by its worker's finish,
//     which waits for the tenant row we hold. The claim thus never waits for
//     a lock, and a changed row is re-checked to be still pending.
//   - chosen: round-robin over the tenants (first job of each, then second
//     ...), at most max.
//   - claimed: the jobs start a new attempt.
//   - tally: per tenant, the jobs picked and claimed and the first job
//     taken, in one grouping of picked and claimed together. It used to be
//     two groupings joined by tenant; the planner cannot estimate a CTE's
//     rows, and with a fresh table's statistics it joined them, and quiet
//     to them, by nested loops over CTE scans, tenants x tenants: 13 ms of
//     a 22 ms claim of 100 tenants (EXPLAIN ANALYZE, before the first
//     ANALYZE). Nothing here joins one CTE to another by tenant.
//   - quiet, served: running grows by what was claimed (counted once
//     per tenant: a count over claimed per tenant row costs tenants x jobs,
//     ~10 ms at 1,000 jobs, with the tenant rows locked), served_at moves
//     the tenant to the back, and, if no insert for the tenant is in
//     progress (quiet: the claim took its advisory lock exclusively), a
//     tenant that had fewer pending jobs than asked for is marked idle
//     (has_work false; see rewakeSQL) and the first job taken becomes the
//     candidate for its claim floor (see floorSQL). A tenant marked idle
//     that got nothing (its last job taken by an earlier claim that did
//     not run short) keeps its served_at: it was not served, and when it
//     gets work again its turn comes before the tenants served since
//     (JobClaimEmptiedTenant/KeepsItsTurn; moreSQL reports it). Others
//     that got nothing (their jobs locked by other transactions) move to
//     the back all the same, when rewakeSQL finds them a pending job, so
//     that they do not hold the front of every claim
//     (TestJobClaim_LockedTenantGoesBack). The lock is tried for
//     every such tenant, and for about 100 of the others (all of them up
//     to 100 tenants; at random beyond, so that each gets its turn): an
//     advisory lock takes a slot of the server's shared lock table
//     (max_locks_per_transaction x max_connections), which a few claims of
//     1,000 tenants each could fill. The rows are joined to quiet by key:
//     with many tenant rows PostgreSQL looks each up by index, with few it
//     may read them all and hash quiet (TestJobClaim_PlanLinear). They were
//     restricted to = ANY (the locked tenants) as well, and then planned as
//     a nested loop over that index scan that read quiet once per tenant.
//
// It does not notify: JobClaim does, after the commit (notify_post.go).
var claimSQL = `
WITH tenants AS (
    SELECT tq.tenant_id, tq.served_at, tq.max_running - tq.running AS free, tq.floor_priority, tq.floor_id
    FROM docket_tenant_queues tq
    WHERE tq.queue = $1 AND tq.has_work AND tq.running < tq.max_running AND NOT tq.paused
      AND NOT EXISTS (SELECT FROM docket_queues q WHERE q.name = $1 AND q.paused_at IS NOT NULL)
      AND NOT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = tq.tenant_id)
    ORDER BY tq.served_at, tq.tenant_id
    LIMIT $2
    FOR NO KEY UPDATE SKIP LOCKED
), shares AS (
    SELECT tenant_id, served_at, floor_priority, floor_id,
           least(free, ceil($2::numeric / count(*) OVER ())::int) AS wanted
    FROM tenants
), picked AS (
    SELECT s.tenant_id, s.served_at, s.wanted, p.id, p.priority
    FROM shares s
    LEFT JOIN LATERAL (
` + fromFloorSQL("$1", "s", "s.wanted", "FOR NO KEY UPDATE SKIP LOCKED") + `
    ) p ON true
), chosen AS (
    SELECT id
    FROM (SELECT id, tenant_id, served_at,
                 row_number() OVER (PARTITION BY tenant_id ORDER BY priority DESC, id) AS rn
          FROM picked WHERE id IS NOT NULL) r
    ORDER BY rn, served_at, tenant_id
    LIMIT $2
), claimed AS (
    UPDATE docket_jobs j SET
        state = 'running',
        attempt = j.attempt + 1,
        lease_token = 1 + floor(random() * 9.2e18)::bigint,
        lease_expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond',
        started_at = clock_timestamp(),
        worker_id = $4,
        stage = '', progress = 0, progress_message = '',
        updated_at = clock_timestamp()
    FROM chosen c
    WHERE j.id = c.id
    RETURNING ` + jobCols("j.") + `
), tally AS (
    SELECT tenant_id, min(wanted) AS wanted, count(picked_id) AS picked, count(claimed_id) AS n,
           max(priority) AS first_priority,
           (array_agg(claimed_id ORDER BY priority DESC, claimed_id) FILTER (WHERE claimed_id IS NOT NULL))[1] AS first_id
    FROM (SELECT tenant_id, wanted, id AS picked_id, NULL::bigint AS claimed_id, NULL::smallint AS priority FROM picked
          UNION ALL
          SELECT tenant_id, NULL, NULL, id, priority FROM claimed) u
    GROUP BY tenant_id
), quiet AS (
    SELECT tenant_id, n, first_priority, first_id, short,
           CASE WHEN short OR random() * count(*) OVER () < 100
                THEN pg_try_advisory_xact_lock(1684763761, docket_tenant_lock_key($1, tenant_id))
                ELSE false END AS quiet
    FROM (SELECT tenant_id, n, first_priority, first_id, picked < wanted AS short FROM tally) g
), served AS (
    UPDATE docket_tenant_queues t SET
        running = t.running + f.n,
        served_at = CASE WHEN f.n = 0 AND f.short AND f.quiet THEN t.served_at ELSE clock_timestamp() END,
        has_work = NOT (f.short AND f.quiet),
        cleared_at = CASE WHEN f.short AND f.quiet THEN clock_timestamp() ELSE t.cleared_at END,
        cleared_by = CASE WHEN f.short AND f.quiet THEN txid_current() ELSE t.cleared_by END
    FROM quiet f
    WHERE t.queue = $1 AND t.tenant_id = f.tenant_id
), floors AS (
    SELECT set_config('docket.claim_floor', coalesce(json_agg(json_build_object(
        'tenant_id', f.tenant_id, 'priority', f.first_priority, 'id', f.first_id))::text, '[]'), true) AS floors
    FROM quiet f
    WHERE f.quiet AND f.n > 0
)
SELECT ` + jobColumns + ` FROM claimed, floors
ORDER BY id`

// rewakeSQL runs right after claimSQL, in its transaction and with a new
// snapshot, and marks claimable again the tenants the claim marked idle
// that have a pending job after all.
//
// The race it closes, with the advisory lock of docket_insert_jobs: a
// claim's snapshot predates a concurrent insert's commit, so the claim
// finds the tenant empty and marks it idle; the insert, which skips
// tenants already marked claimable (so that inserts for one tenant do not
// serialise on its row), read has_work before the claim's change
// committed. Inserters hold a shared advisory lock of the tenant from
// before their snapshot to their commit, and a claim marks a tenant idle
// only if it gets that lock exclusively, without waiting. So an insert is
// either in progress at that moment (the tenant stays claimable), or
// starts after it (it waits for the claim to commit and sees the tenant
// idle), or committed before it, when this statement's snapshot sees its
// job. Finishes, rescues and the schedule sweep update the tenant row,
// which waits for the claim's row lock and re-reads the newest version.
//
// OFFSET 0 keeps the EXISTS a per-row subplan, a probe of the fetch index
// by (queue, tenant_id). Without it PostgreSQL may turn it into a semi
// join that reads every pending job of the queue for each idle tenant
// (fresh tables have no statistics): 7-37 ms per claim in a drain, while
// the claim holds its tenant rows and finishes wait for them. The ORDER BY
// (the fetch index's order; OFFSET 0 keeps PostgreSQL from dropping it
// from an EXISTS) keeps the probe on that index: with statistics that
// say most jobs are the tenant's (one tenant's flood), a bare EXISTS was
// planned as a sequential scan expected to stop at the first match, and
// read the whole table when every job it passed was claimed already
// (316 ms in the fairness benchmark behind 200,000 jobs).
//
// A tenant the claim gave nothing kept its served_at (claimSQL's served:
// it looked empty). One that has a pending job after all got nothing for
// another reason, most often jobs another transaction holds (SKIP LOCKED
// passed them), which may hold them for long: it moves to the back, as a
// tenant served does, rather than hold the front of every claim, each of
// which would come back empty from it (TestJobClaim_LockedTenantGoesBack).
const rewakeSQL = `
UPDATE docket_tenant_queues t SET has_work = true,
    served_at = CASE WHEN t.served_at < now() THEN clock_timestamp() ELSE t.served_at END
WHERE NOT t.has_work AND t.cleared_at >= now() AND t.cleared_by = txid_current_if_assigned()
  AND t.queue = $1
  AND EXISTS (SELECT FROM docket_jobs j WHERE j.queue = t.queue AND j.tenant_id = t.tenant_id AND j.state = 'pending'
              ORDER BY j.priority DESC, j.id LIMIT 1 OFFSET 0)`

// floorSQL runs after rewakeSQL, in the claim's transaction and with a new
// snapshot, and moves the claim floor of the tenants the claim left a
// candidate for (the transaction-local setting docket.claim_floor, which
// claimSQL's floors CTE writes): to the tenant's first pending job at or
// after its old floor, or, when it has none, to the first job the claim
// took. See migration 012_claim_floor.sql.
//
// The floor is a position (priority, id) at or before every pending job of
// the tenant in fetch order (priority DESC, id); the claim starts its index
// scan there and so skips the entries of jobs claimed before, which stay in
// the fetch index until VACUUM. That it holds:
//   - The claim leaves a candidate only for tenants whose advisory lock it
//     took exclusively (quiet), as it does to mark one idle: no insert of
//     the tenant is in progress, and one that starts waits for the claim's
//     commit, then allocates ids above the floor's and clears the floor if
//     its job has a higher priority (docket_insert_jobs).
//   - This statement's snapshot is taken after that lock, so the search
//     sees an insert that committed after the claim's snapshot, and a job
//     the claim skipped as locked (SKIP LOCKED) that is still pending; both
//     are at or after the old floor (the first by the rule above for the
//     claim that set it, the second because it was pending then). The
//     search passes only the entries of the jobs this claim took.
//   - Anything else that makes a job pending (a retry, a release, a rescue,
//     the schedule sweep) locks the tenant row, which the claim holds, and
//     clears the floor after the claim's commit (tenant_lock.go).
//
// The search is the claim's picked step for one job: two ordered range
// scans of the fetch index (the floor's priority from its id, then the
// lower priorities). The priority is bounded by BETWEEN, not =: with an
// equality the ORDER BY reduces to id, which the primary key also serves,
// and the planner took it with one tenant's flood in the statistics,
// reading every job below the bound (914 ms per tenant in the fairness
// benchmark behind 10^6 jobs).
var floorSQL = `
UPDATE docket_tenant_queues t SET (floor_priority, floor_id) = (
    SELECT coalesce(q.priority, c.priority), coalesce(q.id, c.id)
    FROM (SELECT) one LEFT JOIN LATERAL (
` + fromFloorSQL("t.queue", "t", "1", "") + `
    ) q ON true)
FROM json_to_recordset(coalesce(nullif(current_setting('docket.claim_floor', true), ''), '[]')::json)
    AS c(tenant_id text, priority smallint, id bigint)
WHERE t.queue = $1 AND t.tenant_id = c.tenant_id`

// fromFloorSQL is a tenant's first limit pending jobs (id, priority) in
// fetch order from its claim floor, for the claim's picked step and
// floorSQL alike: row is the alias of a row with tenant_id, floor_priority
// and floor_id, queue the queue's expression, lock a locking clause or
// "". Two ordered range scans of the fetch index, joined by UNION ALL and
// read lazily: the floor's priority from its id, then the lower
// priorities. The priority is bounded by BETWEEN, not =: with an equality
// the ORDER BY reduces to id, which the primary key also serves (see
// floorSQL).
func fromFloorSQL(queue, row, limit, lock string) string {
	branch := func(cond, name string) string {
		return `        SELECT * FROM (
            SELECT j.id, j.priority FROM docket_jobs j
            WHERE j.queue = ` + queue + ` AND j.tenant_id = ` + row + `.tenant_id AND j.state = 'pending'
              AND ` + cond + `
            ORDER BY j.priority DESC, j.id
            LIMIT ` + limit + ` ` + lock + `) ` + name + `
`
	}
	return branch("j.priority BETWEEN "+row+".floor_priority AND "+row+".floor_priority AND j.id >= "+row+".floor_id", "at_floor") +
		"        UNION ALL\n" +
		branch("j.priority < coalesce("+row+".floor_priority::int, 32768)", "below_floor") +
		"        LIMIT " + limit
}

// moreSQL runs last in the claim's transaction, with a new snapshot, and
// reports whether a claimable tenant is left that the claim did not take
// (one another transaction held, which SKIP LOCKED passed by, or one beyond
// the claim's limit) with at least two pending jobs. Every tenant row the
// claim took it also updated (served), so its version is the transaction's
// own (age(xmin) = 0), with the newest served_at: in the claimable index's
// order (served_at) another tenant comes first, and the probe stops there
// (OFFSET 0 keeps the ORDER BY, which PostgreSQL drops from a plain
// EXISTS; see rewakeSQL). A row of the transaction's own that the claim
// did not serve, only folded (foldFreedSQL writes the row of every tenant
// with a finish since the last claim), keeps its served_at from before the
// transaction (now()): it was left out with the served ones, and a claim
// that came back empty from a stale tenant said nothing of a folded tenant
// with work (TestJobClaim_MoreSeesFoldedTenant). When the claim served every claimable tenant (a
// one-worker drain) the probe reads their entries to the end: one index
// entry and heap visit per tenant served, a small part of what the claim
// itself read for them.
//
// Two jobs, not one: the row's holder is most often another claim, which
// takes the tenant's next job. When one insert wakes many idle workers,
// one claim wins the tenant and its one job; the others, had they counted
// it, would each claim once more for nothing (the chaos thundering-herd
// scenario: 15 claims for one insert against at most 8). A tenant left with one job after a claim
// that held it is found at the next wake-up or poll, as before.
//
// The probe looks at the first moreProbeTenants of those tenants only. A
// tenant still marked claimable may have no pending job left (a claim that
// took its last job without finding it short, see claimSQL's quiet), and
// claims clear such tenants a claim's worth at a time: unbounded, the probe
// read each of them, 1.1 s per claim with 10^5 tenants and 10^3 pending
// jobs (the scale scenario, 2026-11-25). The tenants another transaction
// holds, the case the probe is for, are the least recently served, at the
// front.
//
// Its second column counts the tenants the claim found empty: still
// marked claimable, but their last pending job taken by a claim that did
// not run short of it (see claimSQL's quiet). The claim spent one of its
// tenants on each and marked it idle without serving it (served_at kept).
// When those and the tenants served fill the claim's limit of tenants,
// a tenant with work may have been left out, whatever its pending jobs,
// and JobClaim reports more (the conformance case
// JobClaimEmptiedTenant/OthersClaimed: a claim of one job came back empty
// with a tenant's job pending behind it, until the next poll). Each claim
// clears up to its limit of such tenants, so the claims this adds are
// bounded by them. A tenant served by a claim that committed after this
// transaction began (served_at after now()) is not counted: its job then
// waits for a wake-up or a poll, as before.
var moreSQL = `
SELECT EXISTS (
    SELECT FROM (
        SELECT tq.queue, tq.tenant_id, tq.floor_priority, tq.floor_id
        FROM docket_tenant_queues tq
        WHERE tq.queue = $1 AND tq.has_work AND tq.running < tq.max_running AND NOT tq.paused
          AND (age(tq.xmin) <> 0 OR tq.served_at < now())
          AND NOT EXISTS (SELECT FROM docket_queues q WHERE q.name = $1 AND q.paused_at IS NOT NULL)
          AND NOT EXISTS (SELECT FROM docket_tenant_pauses p WHERE p.tenant_id = tq.tenant_id)
        ORDER BY tq.served_at, tq.tenant_id
        LIMIT ` + strconv.Itoa(moreProbeTenants) + `
    ) tq
    WHERE (SELECT count(*) FROM (
` + fromFloorSQL("tq.queue", "tq", "2", "") + `
          ) two) = 2),
    (SELECT count(*) FROM docket_tenant_queues t
     WHERE t.queue = $1 AND NOT t.has_work AND t.cleared_at >= now()
       AND t.cleared_by = txid_current_if_assigned() AND t.served_at < now())`

// moreProbeTenants is how many tenants moreSQL looks at, at most.
const moreProbeTenants = 100

// JobClaim claims up to params.Max jobs in one round trip: foldFreedSQL
// (the slots finishes freed since the last claim, see tenant_lock.go),
// claimSQL, rewakeSQL, floorSQL and moreSQL in one transaction. See
// driver.Executor.
func (e *Executor) JobClaim(ctx context.Context, params *driver.JobClaimParams) ([]*driver.Job, bool, error) {
	if err := driver.ValidateQueueName(params.Queue); err != nil {
		return nil, false, err
	}
	if params.Max <= 0 || params.LeaseDuration <= 0 {
		return nil, false, fmt.Errorf("%w: claim needs Max > 0 and LeaseDuration > 0", driver.ErrInvalid)
	}
	var (
		jobs []*driver.Job
		more bool
	)
	wait := params.WaitTurn
	err := e.retryClaim(ctx, func() error {
		jobs, more = nil, false
		err := e.sendClaim(ctx, e.claimBatch(params, wait, &jobs, &more))
		if isLockTimeout(err) {
			wait = 0 // the turn did not come (or another lock timed out): claim as usual
		}
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("claim jobs: %w", interpretError(err))
	}
	if len(jobs) > 0 {
		if err := e.notify(ctx, note{driver.TopicChange, params.Queue}); err != nil {
			return nil, false, fmt.Errorf("claim jobs: %w", interpretError(err))
		}
	}
	return jobs, more, nil
}

// claimLockTimeout bounds every lock wait of a claim's transaction (see
// claimLockTimeoutSQL).
const claimLockTimeout = "100ms"

// claimLockTimeoutSQL sets lock_timeout for the claim's transaction only
// (the batch is one transaction; set_config's is_local ends with it). The
// claim is written never to wait for a row lock (SKIP LOCKED), but
// PostgreSQL's SKIP LOCKED can wait all the same: when the row version in
// the statement's snapshot was being updated by a transaction that commits
// between the lock's check and its conditional wait, heap_lock_tuple
// follows the update chain (heap_lock_updated_tuple_rec) and waits
// unconditionally for whoever holds the newer version ("while locking
// updated version ... of tuple", XLTW_LockUpdated). The claim then waits
// with tenant rows locked in served_at order, and a statement that locks
// tenant rows in key order (a finish in a caller's transaction, a wake-up,
// the rescuer, an insert) can close a cycle with it: the churn soak's one
// deadlock in 159,968 claims (TestClaimWaitStress
// reproduces such waits in seconds). With the limit the claim gives up its
// locks long before the deadlock detector (1 s) and JobClaim retries it.
const claimLockTimeoutSQL = `SELECT set_config('lock_timeout', $1, true)`

// claimStartSQL is a claim's first statement outside a caller's
// transaction: it sets lock_timeout (see claimLockTimeoutSQL and
// claimTurnSQL), and makes the claim's statements after it run on their
// generic plans (plan_cache_mode, for the transaction only).
//
// PostgreSQL plans a prepared statement for its parameters (a custom plan)
// on its first five runs, and after that only while the custom plans'
// estimated cost stays below the generic plan's. Behind one tenant's flood
// of 10^6 pending jobs the claim never left custom plans: each claim
// planned claimSQL anew, 1.6 ms of server CPU, for a claim that then ran in
// 0.6 ms (pg_stat_statements over the fairness benchmark: 432 plans in 428
// claims, 685 ms planning against 246 ms executing; behind 50,000 jobs, 24
// plans in 879 claims). A claim of a few jobs thus cost three times what it
// did behind a small backlog: a cost that grew with the backlog. The
// generic plan is as fast (EXPLAIN ANALYZE of a 3-job claim at 10^6, before
// and after ANALYZE: 0.72 and 0.55 ms generic against 0.92 and 0.76 custom;
// a 1,000-job claim of 100 tenants, 26 ms either way) and is planned once
// per connection, and again after an ANALYZE changes the statistics.
// TestJobClaim_PlanLinear holds the claim's generic plan linear in the
// tenants and jobs it takes, as the custom one; TestJobClaim_GenericPlans
// checks that claims plan nothing per call.
//
// The worker's batched finish plans anew too behind such a flood (229
// plans in 493 calls, 0.7 ms each), but running it after this statement,
// in a batch, cost steady 5-7 % (18 pairs, docs/benchmarks.md), for no
// gain measurable in the fairness benchmark: it is left as it was.
//
// A claim in a caller's transaction does not set it: the setting would
// last the rest of that transaction, for the caller's statements too.
const claimStartSQL = claimLockTimeoutSQL + `, set_config('plan_cache_mode', 'force_generic_plan', true)`

// claimRetries is how many times JobClaim runs a claim again after a lock
// timeout or a deadlock.
const claimRetries = 5

// retryClaim runs fn, and again up to claimRetries times when it fails
// with lock_not_available or deadlock_detected outside a caller's
// transaction: the batch was one transaction, rolled back whole.
func (e *Executor) retryClaim(ctx context.Context, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		if err == nil || e.tx != nil || i == claimRetries || ctx.Err() != nil || (!isDeadlock(err) && !isLockTimeout(err)) {
			return err
		}
	}
}

// claimTurnSQL and claimTurnWaitSQL take the queue's claim lock (an
// advisory lock of class 1684763762, keyed by the queue's name) for the
// claim's transaction: every claim outside a caller's transaction shares
// it, and a claim with driver.JobClaimParams.WaitTurn takes it
// exclusively. Claims skip the tenant rows other claims hold (SKIP
// LOCKED), so when few tenants have work, or when every claim asks for as
// many jobs as there are tenants' shares (four processes of 1,000 slots
// and 100 tenants), claims running at once come back empty: in the
// fairness benchmark four workers contend for one flooding tenant's row,
// and the losers backed off for 20 ms while their slots sat idle (80 ms
// of idle slots per cycle of 10 ms jobs, traced). The loser's next claim
// waits instead, without CPU, for the claims in flight to commit; new
// claims queue behind it (PostgreSQL grants a lock in the order it was
// asked for when the modes conflict), so it then runs alone and finds the
// rows free.
//
// It is the first lock the transaction takes, and only claims take it, so
// a claim waiting for it holds nothing another transaction could wait for.
// A claim waits for it at most WaitTurn (exclusive) or claimTurnTimeout
// (shared: the claims queued behind a claim that waits its turn), and its
// other lock waits at most claimLockTimeout; a claim whose wait ran out
// is run again by retryClaim, the one that waited its turn as an ordinary
// claim. In a
// caller's transaction a claim takes neither: it could hold the lock for
// as long as the caller's transaction lasts.
const (
	claimTurnSQL     = `SELECT pg_advisory_xact_lock_shared(1684763762, hashtext($1))`
	claimTurnWaitSQL = `SELECT pg_advisory_xact_lock(1684763762, hashtext($1))`
)

// claimTurnTimeout bounds a claim's wait for the queue's claim lock
// shared, behind a claim that waits its turn: one claim's transaction, and
// a claim of 1,000 jobs took 120-190 ms in a loaded K=4 fleet on 2 vCPUs.
const claimTurnTimeout = "2s"

// claimBatch is a claim's batch; the claimed jobs are stored in *jobs, and
// moreSQL's answer in *more. A positive wait takes the queue's claim lock
// exclusively, waiting that long at most (see claimTurnSQL).
func (e *Executor) claimBatch(params *driver.JobClaimParams, wait time.Duration, jobs *[]*driver.Job, more *bool) *pgx.Batch {
	b := &pgx.Batch{}
	if e.tx == nil {
		if wait > 0 {
			b.Queue(claimStartSQL, strconv.FormatInt(max(wait.Milliseconds(), 1), 10)+"ms")
			b.Queue(claimTurnWaitSQL, params.Queue)
		} else {
			b.Queue(claimStartSQL, claimTurnTimeout)
			b.Queue(claimTurnSQL, params.Queue)
		}
		b.Queue(claimLockTimeoutSQL, claimLockTimeout)
	}
	b.Queue(foldFreedSQL, params.Queue)
	b.Queue(claimSQL, params.Queue, params.Max, micros(params.LeaseDuration), params.WorkerID).
		Query(func(rows pgx.Rows) error {
			var err error
			*jobs, err = scanJobs(rows)
			return err
		})
	b.Queue(rewakeSQL, params.Queue)
	b.Queue(floorSQL, params.Queue)
	b.Queue(moreSQL, params.Queue).QueryRow(func(row pgx.Row) error {
		var emptied int
		if err := row.Scan(more, &emptied); err != nil {
			return err
		}
		*more = *more || emptied > 0 && tenantsServed(*jobs)+emptied >= params.Max
		return nil
	})
	return b
}

// tenantsServed is the number of tenants jobs belong to.
func tenantsServed(jobs []*driver.Job) int {
	seen := make(map[string]struct{}, len(jobs))
	for _, j := range jobs {
		seen[j.TenantID] = struct{}{}
	}
	return len(seen)
}
