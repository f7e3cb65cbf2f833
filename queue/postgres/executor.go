package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue/driver"
)

var (
	_ driver.Executor   = (*Executor)(nil)
	_ driver.ExecutorTx = (*ExecutorTx)(nil)
)

// dbtx is what both *pgxpool.Pool and pgx.Tx offer.
type dbtx interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Executor runs the engine's statements on a pool (each in its own
// transaction) or inside a transaction.
type Executor struct {
	db     dbtx
	tx     pgx.Tx // set when bound to a transaction
	repair *repairClock
	post   *postNotifier // sends notifications after commit (notify_post.go)
	notes  *txNotes      // set when tx is one the driver opened: its notifications, for after its commit
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx struct {
	Executor
	own bool // the transaction, not a savepoint: Commit posts its notes
}

// Begin starts a transaction, or a savepoint inside one.
func (e *Executor) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	tx, err := e.db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", interpretError(err))
	}
	x := &ExecutorTx{Executor: Executor{db: tx, tx: tx, repair: e.repair, post: e.post, notes: e.notes}}
	if e.tx == nil {
		x.notes, x.own = &txNotes{}, true
	}
	return x, nil
}

// Tx returns the transaction.
func (e *ExecutorTx) Tx() pgx.Tx { return e.tx }

// Commit commits the transaction (releases the savepoint).
func (e *ExecutorTx) Commit(ctx context.Context) error {
	if err := e.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", interpretError(err))
	}
	if e.own {
		e.post.add(e.notes.take()...)
	}
	return nil
}

// Rollback rolls the transaction back. After Commit it does nothing.
func (e *ExecutorTx) Rollback(ctx context.Context) error {
	if err := e.tx.Rollback(ctx); err != nil && err != pgx.ErrTxClosed { //nolint:errorlint // sentinel compared as pgx documents
		return fmt.Errorf("rollback: %w", interpretError(err))
	}
	return nil
}

// inTx runs fn in one transaction: the executor's own when it has one,
// else a new one committed when fn succeeds.
func (e *Executor) inTx(ctx context.Context, fn func(x *Executor) error) error {
	if e.tx != nil {
		return fn(e)
	}
	notes := &txNotes{}
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		return fn(&Executor{db: tx, tx: tx, repair: e.repair, post: e.post, notes: notes})
	})
	if err == nil {
		e.post.add(notes.take()...)
	}
	return err
}

// deadlockRetries is how many times a statement is run again after
// PostgreSQL aborted it to break a deadlock.
const deadlockRetries = 3

// retryDeadlock runs fn, and runs it again, up to deadlockRetries times,
// when it fails with deadlock_detected while e is not bound to a
// transaction: fn's statement then ran in a transaction of its own, which
// the server rolled back whole, so running it again is safe. Statements are
// written to lock in one order (tenant_lock.go); this is the backstop for
// the cycles that order cannot rule out. In a caller's transaction the
// error is returned, as the transaction is aborted.
func (e *Executor) retryDeadlock(ctx context.Context, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		if err == nil || e.tx != nil || i == deadlockRetries || ctx.Err() != nil || !isDeadlock(err) {
			return err
		}
	}
}
