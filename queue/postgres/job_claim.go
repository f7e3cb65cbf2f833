package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// The claim's statements, which JobClaim runs in this order in one
// transaction after foldFreedSQL (tenant_lock.go): claim.sql takes the jobs
// and keeps the tenant rows' books, claim_rewake.sql and claim_floor.sql
// settle the tenants it marked idle and their claim floors, claim_more.sql
// says whether a claim should follow. Each file states its contract;
// docs/claiming.md describes them as a state machine, and the conformance
// suite's differential test (queue/drivertest) is their executable spec.
// None notifies: JobClaim does, after the commit (notify_post.go).
var (
	//go:embed sql/claim.sql
	claimSQL string
	//go:embed sql/claim_rewake.sql
	rewakeSQL string
	//go:embed sql/claim_floor.sql
	floorSQL string
	//go:embed sql/claim_more.sql
	moreSQL string
)

// moreProbeTenants is how many tenants claim_more.sql looks at, at most
// (its LIMIT; TestClaimSQL_Files checks that they agree).
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
		err := e.sendClaim(ctx, e.claimBatch(params, wait, &jobs, &more), params.LeaseDuration)
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
// with tenant rows locked in vtime order, and a statement that locks
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
		var (
			emptied int
			cut     bool
		)
		if err := row.Scan(more, &emptied, &cut); err != nil {
			return err
		}
		*more = *more || cut || emptied > 0 && tenantsServed(*jobs)+emptied >= params.Max
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
