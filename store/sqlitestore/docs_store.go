package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/sqlite"
)

// The document store (docket.Store) lives in the same database as the
// queue, so a document and its job commit in one transaction.
//
// SQLite has no row-level security. The tenant filter that every statement
// of a tenantTx carries (WHERE tenant_id = ?, or a tenant_id column on
// insert) is the only wall between tenants: a statement without it is a bug.
//
// System-scope methods (tenants, API keys) write on the writer and read on
// the reader pool, each in its own transaction.

// Store is docket.Store on SQLite, over an engine driver's database. It is
// safe for concurrent use.
type Store struct {
	d      *sqlite.Driver // its writer (one connection, BEGIN IMMEDIATE) takes every write in turn
	reader *sql.DB        // the driver's read-only pool
}

// New returns the document store that shares d's database: its writer,
// whose transactions d's statements (queue.Client.EnqueueTx,
// queue.Task.CompleteTx) run in, its readers and its clock. Migrate the
// store, not only d, before use. Closing d closes the store.
func New(d *sqlite.Driver) *Store {
	return &Store{d: d, reader: d.ReadDB()}
}

// clock returns the driver's now in unix microseconds.
func (s *Store) clock() int64 { return s.d.Now().UnixMicro() }

// InTenant runs fn in a write transaction on the writer's one connection
// (BEGIN IMMEDIATE), so the *sql.Tx that tx.Native returns serves
// queue.Client.EnqueueTx and queue.Task.CompleteTx. Every other write of
// the store waits while fn runs.
func (s *Store) InTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	tx, err := s.d.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("begin tenant transaction: %w", docsError(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(&tenantTx{s: s, tx: tx.Tx, tenant: tenantID}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit tenant transaction: %w", docsError(err))
	}
	return nil
}

// ReadTenant runs fn in a read transaction of the reader pool: one
// snapshot, and it never waits for the writer. Writes in it fail.
func (s *Store) ReadTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	tx, err := s.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin tenant read: %w", docsError(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(&tenantTx{s: s, tx: tx, tenant: tenantID, readOnly: true}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("end tenant read: %w", docsError(err))
	}
	return nil
}

var _ docket.Tx = (*tenantTx)(nil)

// tenantTx is a docket.Tx: a transaction and the tenant every one of its
// statements names.
type tenantTx struct {
	s        *Store
	tx       *sql.Tx
	tenant   string
	readOnly bool
}

// Native returns the *sql.Tx.
func (t *tenantTx) Native() any { return t.tx }

// TenantID returns the transaction's tenant.
func (t *tenantTx) TenantID() string { return t.tenant }

// writable refuses a write in a ReadTenant transaction with a clear error
// rather than SQLite's "attempt to write a readonly database".
func (t *tenantTx) writable(op string) error {
	if t.readOnly {
		return fmt.Errorf("%s: %w: read-only tenant transaction", op, docket.ErrInvalid)
	}
	return nil
}

// docsWrite runs fn in a write transaction of its own with the store's
// now, and commits it when fn returns nil.
func (s *Store) docsWrite(ctx context.Context, fn func(tx *sql.Tx, now int64) error) error {
	tx, err := s.d.BeginWrite(ctx)
	if err != nil {
		return docsError(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx.Tx, s.clock()); err != nil {
		return docsError(err)
	}
	return docsError(tx.Commit())
}

// writeExec runs one write statement in a transaction of its own, in its
// turn for the writer.
func (s *Store) writeExec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx, err := s.d.BeginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.Tx.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return res, tx.Commit()
}

// notFound reports a missing object of the tenant.
func notFound(what, id string) error {
	return fmt.Errorf("%s %q: %w", what, id, docket.ErrNotFound)
}

// affected returns ErrNotFound when res changed no row.
func affected(res sql.Result, what, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound(what, id)
	}
	return nil
}

// scanner is a row to scan: *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
