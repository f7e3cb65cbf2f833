// Package sqlitestore is Docket's document store (docket.Store) on SQLite:
// tenants, API keys, documents, chunks and full-text search, rate-limit
// slots, idempotency records, tenant deletion and the monitoring readers.
//
// A [Store] lives in the database file of an engine driver
// ([sqlite.Driver]): it writes on the driver's one writer connection
// (sqlite.Driver.DB, BEGIN IMMEDIATE, so its writes and the engine's run
// one at a time), reads on its read-only pool (sqlite.Driver.ReadDB) and
// takes times from its clock (sqlite.Driver.Now). The *sql.Tx of a tenant
// transaction ([Store.InTenant]) therefore serves
// queue.Client.EnqueueTx and queue.Task.CompleteTx: a document and its job
// commit together. SQLite has no notifier: the engine wakes its workers in
// process after such a commit, as after any EnqueueTx.
//
// # Schema
//
// The store has its own migration line (migrations/, recorded in
// docket_migrations with line 'docs'). [Store.Migrate] runs the engine's
// line first, then this one; a database of the engine alone
// (sqlite.Driver.Migrate) has no document tables.
//
// SQLite has no row-level security: the tenant filter that every statement
// of a tenant transaction carries is the only wall between tenants.
package sqlitestore
