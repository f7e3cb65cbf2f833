package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A claim's batch sets lock_timeout first (claimLockTimeoutSQL), but pgx
// prepares the statements of a batch it has not seen on a connection before
// it sends the batch, in a round trip of their own (Parse, Describe, Sync),
// and again after every failed batch (it drops a failed batch's statements
// from its statement cache). Parse analysis takes the relation locks of
// every table a statement names (docket_jobs, docket_tenant_queues, ...),
// so behind a non-concurrent DDL statement's ACCESS EXCLUSIVE lock that
// round trip waited without a bound, on a connection's first claim and on
// each retry of a claim that had just given up after its limit.
//
// sendClaim prepares the claim's statements itself, once per connection,
// in a transaction that sets the same lock_timeout first: a prepare behind
// such a lock gives up after claimLockTimeout with lock_not_available, which
// JobClaim's retryClaim runs again as it does a batch that timed out. pgx
// uses a statement prepared with Conn.Prepare under the name of its own
// text in place of its cache, and keeps it after a failed batch, so a
// warmed connection's claim is one round trip, as before, and a retry after
// a lock timeout prepares nothing.

// claimPreparedKey is the key, in a connection's pgconn CustomData, of the
// claim statements prepared on it (*claimPrepared).
const claimPreparedKey = "docket.claim_prepared"

// claimPrepared is the claim statements prepared on one connection.
type claimPrepared struct {
	sqls  map[string]bool
	stale bool // a batch failed for another reason than a lock: prepare again
}

// sendClaim runs a claim's batch b. Outside a caller's transaction it runs
// on a pool connection on which b's statements are prepared under
// claimLockTimeout (prepareClaim); in a caller's transaction, whose lock
// waits are the caller's, as pgx sends it.
func (e *Executor) sendClaim(ctx context.Context, b *pgx.Batch, idleLimit time.Duration) error {
	pool, ok := e.db.(*pgxpool.Pool)
	if !ok || e.tx != nil {
		return e.db.SendBatch(ctx, b).Close()
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	conn := c.Conn()
	if err := prepareClaim(ctx, conn, b, idleLimit); err != nil {
		return err
	}
	err = conn.SendBatch(ctx, b).Close()
	if err != nil && !isLockTimeout(err) && !isDeadlock(err) {
		// As pgx does with its cache: a statement may have failed for
		// what it is (a plan whose result type a migration changed), so
		// the next claim on this connection prepares the batch again.
		if p, _ := conn.PgConn().CustomData()[claimPreparedKey].(*claimPrepared); p != nil {
			p.stale = true
		}
	}
	return err
}

// prepareClaim prepares b's statements on conn unless they are prepared
// already: in a transaction of its own that sets lock_timeout to
// claimLockTimeout before the first Parse, so that parse analysis waits no
// longer for a relation lock than the claim itself does, and
// idle_in_transaction_session_timeout to idleLimit (the claim's lease, at
// least claimPrepareIdleFloor): each prepare is a round trip, and a client
// cut off between two of them left its session idle in the transaction,
// holding the relation locks of the statements parsed so far
// (RowExclusiveLock on docket_jobs: no DDL, no migration gets through),
// until TCP gave up. With the limit the server ends such a session, as it
// does a cut completion's (txIdleLimitSQL). It does nothing unless conn prepares statements across round trips (pgx's default
// QueryExecModeCacheStatement, or CacheDescribe); a pool in another mode
// (simple protocol or exec, as for a transaction-pooling proxy) has no such
// round trip. A prepared statement is not transactional: it stays on the
// connection after the transaction ends.
func prepareClaim(ctx context.Context, conn *pgx.Conn, b *pgx.Batch, idleLimit time.Duration) error {
	mode := conn.Config().DefaultQueryExecMode
	if mode != pgx.QueryExecModeCacheStatement && mode != pgx.QueryExecModeCacheDescribe {
		return nil
	}
	data := conn.PgConn().CustomData()
	p, _ := data[claimPreparedKey].(*claimPrepared)
	if p != nil && !p.stale && p.covers(b) {
		return nil
	}
	begin := fmt.Sprintf("BEGIN; SET LOCAL lock_timeout = '%s'; SET LOCAL idle_in_transaction_session_timeout = %d",
		claimLockTimeout, max(idleLimit, claimPrepareIdleFloor).Milliseconds())
	if _, err := conn.Exec(ctx, begin); err != nil {
		return err
	}
	err := func() error {
		if p != nil && p.stale {
			for sql := range p.sqls {
				if err := conn.Deallocate(ctx, sql); err != nil {
					return err
				}
			}
			p = nil
		}
		if p == nil {
			p = &claimPrepared{sqls: make(map[string]bool)}
		}
		for _, q := range b.QueuedQueries {
			if p.sqls[q.SQL] {
				continue
			}
			if _, err := conn.Prepare(ctx, q.SQL, q.SQL); err != nil {
				return err
			}
			p.sqls[q.SQL] = true
		}
		return nil
	}()
	if err != nil {
		// The statements prepared before the failure stay prepared, and
		// are recorded so (p.sqls): the retry prepares the rest.
		if !p.stale {
			data[claimPreparedKey] = p
		}
		if _, rbErr := conn.Exec(ctx, "ROLLBACK"); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		return err
	}
	data[claimPreparedKey] = p
	_, err = conn.Exec(ctx, "COMMIT")
	return err
}

// claimPrepareIdleFloor is the least idle limit of a claim's prepare
// transaction: a lease of milliseconds (tests use them) is shorter than a
// loaded client's pause between two of its round trips.
const claimPrepareIdleFloor = time.Second

// covers reports whether every statement of b is prepared.
func (p *claimPrepared) covers(b *pgx.Batch) bool {
	for _, q := range b.QueuedQueries {
		if !p.sqls[q.SQL] {
			return false
		}
	}
	return true
}
