package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/postgres"
)

// The document store (docket.Store) shares the queue's database, so a
// document and its job commit in one transaction.
//
// Tenant isolation has two walls. Every statement of a tenant transaction
// names its tenant (WHERE tenant_id = $1, or the column on insert); and the
// transaction runs as the role docket_app with app.tenant_id set, both
// transaction-local, so row-level security (migrations/001_documents.sql)
// refuses any other tenant's rows even to a statement that forgot the
// first wall. System-scope methods (tenants, API keys) and the engine run
// as the owner, which the policies let see every row.

// Store is docket.Store on PostgreSQL, over an engine driver's pool. It is
// safe for concurrent use.
type Store struct {
	d    *postgres.Driver
	pool *pgxpool.Pool
}

// New returns the document store that shares d's database: its pool, and
// its transactions, in which d's statements (queue.Client.EnqueueTx,
// queue.Task.CompleteTx) run. Migrate the store, not only d, before use.
// Closing d closes the store.
func New(d *postgres.Driver) *Store {
	return &Store{d: d, pool: d.Pool()}
}

// appRole is the role of tenant transactions.
const appRole = "docket_app"

// scopeSQL switches a transaction to the app role and the tenant, in one
// round trip. Both are transaction-local (is_local true): commit or
// rollback restores the connection before it returns to the pool.
const scopeSQL = `SELECT set_config('role', '` + appRole + `', true), set_config('app.tenant_id', $1, true)`

// InTenant runs fn in a read-write transaction scoped to tenantID, as the
// app role, and commits it when fn returns nil. tx.Native() is the pgx.Tx,
// for queue.Client.EnqueueTx and queue.Task.CompleteTx.
func (s *Store) InTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	return s.inTenant(ctx, tenantID, pgx.TxOptions{}, fn)
}

// ReadTenant runs fn in a read-only transaction scoped to tenantID.
func (s *Store) ReadTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	return s.inTenant(ctx, tenantID, pgx.TxOptions{AccessMode: pgx.ReadOnly}, fn)
}

func (s *Store) inTenant(ctx context.Context, tenantID string, opts pgx.TxOptions, fn func(tx docket.Tx) error) error {
	if tenantID == "" {
		return fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin tenant transaction: %w", docsError(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// The engine's statements in this transaction (EnqueueTx, CompleteTx)
	// leave their notifications to its commit (postgres.Driver.NotifyAfterCommit).
	end := s.d.NotifyAfterCommit(tx)
	committed := false
	defer func() { end(committed) }()
	if _, err := tx.Exec(ctx, scopeSQL, tenantID); err != nil {
		return fmt.Errorf("scope transaction to tenant: %w", docsError(err))
	}
	if err := fn(&tenantTx{tx: tx, tenant: tenantID}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit tenant transaction: %w", docsError(err))
	}
	committed = true
	return nil
}

var (
	_ docket.Store = (*Store)(nil)
	_ docket.Tx    = (*tenantTx)(nil)
)

// tenantTx is a docket.Tx: a transaction scoped to tenant.
type tenantTx struct {
	tx     pgx.Tx
	tenant string
}

// Native returns the pgx.Tx.
func (t *tenantTx) Native() any { return t.tx }

// TenantID returns the transaction's tenant.
func (t *tenantTx) TenantID() string { return t.tenant }
