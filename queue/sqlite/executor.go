package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

var (
	_ driver.Executor   = (*executor)(nil)
	_ driver.ExecutorTx = (*executorTx)(nil)
)

// executor runs the queue's operations. Without tx each runs in its own
// transaction: writes on the single writer connection (BEGIN IMMEDIATE),
// reads on the reader pool. With tx, everything runs in it.
type executor struct {
	d     *Driver
	tx    *sql.Tx
	own   bool // tx was begun by Begin on the writer
	depth int  // savepoint nesting inside tx
}

// txn is one write transaction under way, with the store's now, read once
// so that every time the transaction writes agrees.
type txn struct {
	tx    *sql.Tx
	now   int64 // unix microseconds
	own   bool  // the driver began tx on its writer
	cache *stmtCache
	stmts map[string]*sql.Stmt // prepared in tx
}

func (d *Driver) newTxn(tx *sql.Tx, own bool) *txn {
	return &txn{tx: tx, now: d.clock(), own: own, cache: &d.stmts}
}

// querier is what reads need: the reader pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// write runs fn in the executor's transaction or in a new write
// transaction, which it commits when fn returns nil.
func (e *executor) write(ctx context.Context, fn func(t *txn) error) error {
	if e.tx != nil {
		return interpretError(e.inSavepoint(ctx, fn))
	}
	tx, err := e.d.beginWrite(ctx)
	if err != nil {
		return interpretError(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(e.d.newTxn(tx.Tx, true)); err != nil {
		return interpretError(err)
	}
	return interpretError(tx.Commit())
}

// inSavepoint runs fn inside the caller's transaction, undoing what fn did
// when it fails, so that each operation stays atomic.
func (e *executor) inSavepoint(ctx context.Context, fn func(t *txn) error) error {
	const sp = "docket_op"
	if _, err := e.tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
		return err
	}
	if err := fn(e.d.newTxn(e.tx, e.own)); err != nil {
		_, _ = e.tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK TO "+sp+"; RELEASE "+sp)
		return err
	}
	_, err := e.tx.ExecContext(ctx, "RELEASE "+sp)
	return err
}

// read runs fn on the executor's transaction or on a read transaction of
// the reader pool, so that its statements see one snapshot.
func (e *executor) read(ctx context.Context, fn func(q querier, now int64) error) error {
	if e.tx != nil {
		return interpretError(fn(e.tx, e.d.clock()))
	}
	tx, err := e.d.reader.BeginTx(ctx, nil)
	if err != nil {
		return interpretError(err)
	}
	defer func() { _ = tx.Rollback() }()
	return interpretError(fn(tx, e.d.clock()))
}

// readOne runs one statement on the executor's transaction or the reader
// pool, without a transaction of its own.
func (e *executor) readOne(fn func(q querier) error) error {
	if e.tx != nil {
		return interpretError(fn(e.tx))
	}
	return interpretError(fn(e.d.reader))
}

// Begin starts a write transaction, or a savepoint inside the executor's
// transaction.
func (e *executor) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	if e.tx == nil {
		tx, err := e.d.beginWrite(ctx)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", interpretError(err))
		}
		return &executorTx{executor: executor{d: e.d, tx: tx.Tx, own: true}, turn: tx}, nil
	}
	name := fmt.Sprintf("docket_sp%d", e.depth+1)
	if _, err := e.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return nil, fmt.Errorf("begin: %w", interpretError(err))
	}
	return &executorTx{executor: executor{d: e.d, tx: e.tx, own: e.own, depth: e.depth + 1}, savepoint: name}, nil
}

// executorTx is a transaction begun by Begin: a transaction of the writer,
// or a savepoint.
type executorTx struct {
	executor
	savepoint string   // empty: the transaction itself
	turn      *WriteTx // the transaction itself, which ends the writer's turn
	done      bool
}

func (x *executorTx) Commit(ctx context.Context) error {
	if x.savepoint == "" {
		return interpretError(x.turn.Commit())
	}
	if x.done {
		return fmt.Errorf("commit: %w", sql.ErrTxDone)
	}
	x.done = true
	_, err := x.tx.ExecContext(ctx, "RELEASE "+x.savepoint)
	return interpretError(err)
}

// Rollback undoes the transaction. After Commit or Rollback it does
// nothing, so it can be deferred.
func (x *executorTx) Rollback(ctx context.Context) error {
	if x.savepoint == "" {
		if err := x.turn.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			return interpretError(err)
		}
		return nil
	}
	if x.done {
		return nil
	}
	x.done = true
	_, err := x.tx.ExecContext(ctx, "ROLLBACK TO "+x.savepoint+"; RELEASE "+x.savepoint)
	return interpretError(err)
}
