// Package sqlite is Docket's embedded store: a [driver.Driver] on one SQLite
// database file (modernc.org/sqlite, no cgo), so that `docket serve` runs
// with no set-up. It keeps the PostgreSQL driver's tables and semantics;
// what it cannot do is share the store between processes. It knows
// nothing of documents: the document store (package sqlitestore) shares
// its database through [Driver.BeginWrite], [Driver.DB], [Driver.ReadDB], [Driver.Now],
// [Driver.UnwrapTx] and [Driver.MigrateLine].
//
// # One process, one writer
//
// [Open] takes an exclusive flock on PATH.lock for the life of the Driver. A
// second process (or a second Driver in the same process) fails with
// [ErrLocked] and an error that names the holder and points to PostgreSQL.
// The kernel drops the lock when the process dies, so a crash leaves no
// stale lock. (On systems without flock there is no such check.)
//
// Every write transaction runs on one connection, begun with BEGIN
// IMMEDIATE: writers queue in Go for that connection rather than spin on
// SQLITE_BUSY, and a claim, which reads the running counts and raises them
// in one transaction, can never interleave with another. They take turns
// in the order they asked, except that a transaction whose context is
// marked as background work ([driver.WithBackgroundWrites]: a long
// document's chunks) lets the others go first for up to 200 ms; a
// document store begins its transactions in turn with
// [Driver.BeginWrite]. That is how the
// per-tenant limits hold under any number of concurrent claimers. Reads
// (JobGet, JobList, JobPosition, JobAttempts, QueueStats) use a separate
// pool of read-only connections, which in WAL mode never wait for the
// writer.
//
// A transaction for [queue.Client.EnqueueTx] or [queue.Task.CompleteTx] is
// a *sql.Tx begun on [Driver.DB]. While it is open every other write of
// the store waits: keep it short, and make no other store write from the
// goroutine that holds it (that write would wait for the transaction
// forever, or until its context ends).
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL by default: the log
// is synced at every commit, so an enqueue whose commit returned survives a
// power loss (invariant 1). [Config.Synchronous] "NORMAL" syncs only at
// checkpoints, faster, and safe against a crash of the process but not of
// the machine. Batched operations (JobFinish, JobHeartbeat, JobInsertMany)
// pay one commit per batch.
//
// # Time
//
// Times are stored as INTEGER unix microseconds (UTC), PostgreSQL's
// precision. The store's clock is this process's wall clock, the only
// process using the store; each operation reads it once ([txn].now), so all
// the times one transaction writes agree, and leases, run_at and rescue all
// compare against that one clock.
//
// # Claims
//
// docket_tenant_queues holds, per queue and tenant, the running count, the
// resolved limit, has_work and served_at; a partial index covers exactly
// the tenants that have work and a free slot. A claim takes up to Max of
// those, least recently served first, and from each up to min(free slots,
// ceil(Max/tenants)) jobs from the partial fetch index of pending jobs
// (queue, tenant, priority DESC, id). Its cost depends on what it takes,
// not on the backlog or the number of idle tenants.
//
// # Health
//
// QueueStats.DeadTuples reports PRAGMA freelist_count, the pages deleted
// rows left free in the file (VACUUM returns them); OldestXactAge is 0.
package sqlite
