// Package postgres is Docket's PostgreSQL storage driver, on pgx v5.
//
// It implements [driver.Driver] and knows nothing of documents: the
// document store (package pgstore) shares its database through
// [Driver.Pool], [Driver.UnwrapTx], [Driver.NotifyAfterCommit] and
// [Driver.MigrateLine]. The engine's schema lives in migrations/ (embedded,
// the line "engine" of docket_migrations; [Driver.Migrate] applies it under
// an advisory lock, so many processes may migrate at once) and includes
// docket_enqueue, a SQL function that enqueues a job from a trigger or any
// language.
//
// # Claiming
//
// Every (queue, tenant) pair has a row in docket_tenant_queues holding the
// number of its running jobs, its limit, whether it may have pending jobs
// (has_work) and when it was last served. A claim locks the least recently
// served claimable rows (FOR NO KEY UPDATE SKIP LOCKED, from a partial index
// that holds only tenants with work and a free slot), takes each tenant's
// next jobs from the fetch index and bumps the counters, in one statement
// (one round trip with a small follow-up). The row lock serialises the claimers of a tenant and READ
// COMMITTED re-checks running < max_running on the newest row version, so no
// race exceeds a limit; the cost depends on neither the backlog nor the
// number of idle tenants. The worker's batched finishes do not touch the
// tenant rows: they record the slots they free in docket_tenant_freed, and
// the next claim folds those records into running while it holds the rows
// (until then running over-counts, so a limit can be under-used for a moment,
// never exceeded); cancels, rescues and completions in a caller's
// transaction decrement running at once. A claim that finds a tenant empty marks it idle so
// that later claims skip it; an advisory lock that inserters share and a
// second look with a fresh snapshot keep a concurrent insert from being
// missed (see rewakeSQL), without making inserts for one tenant wait for
// each other. Locks are taken in one order everywhere (see tenant_lock.go).
//
// # Fencing
//
// Every write about a running job names its lease and matches id, attempt
// and lease_token; no match is [driver.ErrLeaseLost]. A CHECK constraint
// makes lease_token non-zero exactly while state = 'running', so a match on
// a non-zero token is a match on a running job. Lease times come from the
// database clock (clock_timestamp()).
//
// # Notifications
//
// Statements that make jobs pending notify 'docket_insert' with the queue's
// name; claims, progress, finishes and cancels notify 'docket_change'.
// Inside a caller's transaction they call pg_notify, which PostgreSQL
// delivers at commit, once per payload per transaction. The hot statements
// run in a transaction of the driver's own (enqueues, claims, finishes,
// progress, InTenant's transactions) send theirs after they commit instead,
// coalesced and without waiting for a WAL flush: a notifying commit holds a
// cluster-wide lock through its flush, which would serialise them (see
// notify_post.go). [Driver.Notifier] listens on a dedicated connection and
// reconnects by itself.
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/driver"
)

var _ driver.Driver = (*Driver)(nil)

// Driver is the PostgreSQL driver. It is safe for concurrent use.
type Driver struct {
	pool     *pgxpool.Pool
	owned    bool // Close closes the pool
	repair   *repairClock
	notifier *Notifier
	post     *postNotifier // notifications of committed transactions (notify_post.go)
	txNotes  notesOf       // InTenant's transactions → their notifications
}

// New returns a driver on pool. Close does not close the pool.
func New(pool *pgxpool.Pool) *Driver {
	return &Driver{pool: pool, repair: &repairClock{}, notifier: &Notifier{config: pool.Config().ConnConfig},
		post: newPostNotifier(pool)}
}

// Open connects a pool to connString and returns a driver that owns it.
func Open(ctx context.Context, connString string) (*Driver, error) {
	pool, err := pgxpool.New(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	d := New(pool)
	d.owned = true
	return d, nil
}

// Pool returns the driver's pool.
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Executor returns an executor on the pool: each method runs in its own
// transaction.
func (d *Driver) Executor() driver.Executor {
	return &Executor{db: d.pool, repair: d.repair, post: d.post}
}

// UnwrapTx returns an executor bound to a pgx.Tx.
func (d *Driver) UnwrapTx(tx any) (driver.Executor, error) {
	ptx, ok := tx.(pgx.Tx)
	if !ok || ptx == nil {
		return nil, fmt.Errorf("%w: postgres driver needs a pgx.Tx, got %T", driver.ErrInvalid, tx)
	}
	return &Executor{db: ptx, tx: ptx, repair: d.repair, post: d.post, notes: d.txNotes.lookup(ptx)}, nil
}

// Notifier returns the LISTEN/NOTIFY notifier.
func (d *Driver) Notifier() driver.Notifier { return d.notifier }

// Capabilities reports everything: PostgreSQL is shared by processes,
// notifies, and enqueues from SQL.
func (d *Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{MultiProcess: true, Notify: true, SQLEnqueue: true}
}

// Close waits for the notifications in flight, and closes the pool if Open
// created it.
func (d *Driver) Close() error {
	d.post.wait()
	if d.owned {
		d.pool.Close()
	}
	return nil
}
