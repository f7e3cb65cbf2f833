// Package pgstore is Docket's document store (docket.Store) on PostgreSQL:
// tenants, API keys, documents, chunks and search, rate-limit slots,
// idempotency records, tenant deletion and the monitoring readers.
//
// A [Store] lives in the database of an engine driver ([postgres.Driver])
// and uses its pool, so a document and its job commit in one transaction:
// the pgx.Tx of a tenant transaction ([Store.InTenant]) serves
// queue.Client.EnqueueTx and queue.Task.CompleteTx. The store registers
// those transactions with [postgres.Driver.NotifyAfterCommit], so the
// engine's statements in them leave their notifications to the commit.
// The driver knows nothing of documents; the store needs only its pool,
// that registration, and UnwrapTx (the engine's own statements, such as
// pausing a tenant being deleted, in the store's transaction).
//
// # Schema
//
// The store has its own migration line (migrations/, recorded in
// docket_migrations with line 'docs'): the document tables, the docket_app
// role, its grants, and the row-level-security policies on every table
// with a tenant_id column, the engine's included. [Store.Migrate] runs the
// engine's line first, then this one; a database of the engine alone
// (postgres.Driver.Migrate) has none of it.
//
// # Tenant isolation
//
// Every statement of a tenant transaction names its tenant, and the
// transaction runs as docket_app with app.tenant_id set, both
// transaction-local, so row-level security refuses another tenant's rows
// even to a statement that forgot the first wall (docs/security.md).
package pgstore
