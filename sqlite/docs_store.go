package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
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

// InTenant runs fn in a write transaction on the writer's one connection
// (BEGIN IMMEDIATE), so the *sql.Tx that tx.Native returns serves
// queue.Client.EnqueueTx and queue.Task.CompleteTx. Every other write of
// the store waits while fn runs.
func (d *Driver) InTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin tenant transaction: %w", translate(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(&tenantTx{d: d, tx: tx, tenant: tenantID}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit tenant transaction: %w", translate(err))
	}
	return nil
}

// ReadTenant runs fn in a read transaction of the reader pool: one
// snapshot, and it never waits for the writer. Writes in it fail.
func (d *Driver) ReadTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	tx, err := d.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin tenant read: %w", translate(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(&tenantTx{d: d, tx: tx, tenant: tenantID, readOnly: true}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("end tenant read: %w", translate(err))
	}
	return nil
}

var _ docket.Tx = (*tenantTx)(nil)

// tenantTx is a docket.Tx: a transaction and the tenant every one of its
// statements names.
type tenantTx struct {
	d        *Driver
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
func (d *Driver) docsWrite(ctx context.Context, fn func(tx *sql.Tx, now int64) error) error {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return docsErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx, d.clock()); err != nil {
		return docsErr(err)
	}
	return docsErr(tx.Commit())
}

// docsErr translates SQLite's errors for the document store: a foreign
// key to a missing tenant or document is ErrNotFound; the rest (a unique
// key: ErrDuplicate) as translate does.
func docsErr(err error) error {
	if err == nil || isTranslated(err) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		if se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
			return fmt.Errorf("%w: %w", docket.ErrNotFound, &queue.DatabaseError{Err: err})
		}
	}
	return translate(err)
}

// isTranslated reports whether err already carries a sentinel, so that
// translating twice changes nothing.
func isTranslated(err error) bool {
	for _, s := range []error{docket.ErrDuplicate, docket.ErrNotFound, docket.ErrInvalid, docket.ErrConflict} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
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
