// Package queue is Docket's job engine: durable, fenced, fair across tenants.
//
// It is a library usable on its own. It knows nothing about documents; it
// stores jobs through a [driver.Driver] (PostgreSQL in package postgres, SQLite in
// package sqlite) and runs them with a [Worker].
//
// # Job states
//
//	         enqueue (run_at > now)          enqueue
//	              │                             │
//	              ▼           run_at reached    ▼
//	         scheduled ───────────────────▶ pending ◀──────────────┐
//	              ▲                             │ claim (attempt+1,  │ lease expired and
//	retry backoff │                             │ new lease token)   │ attempts left (rescue),
//	or snooze     │                             ▼                    │ or shutdown release
//	              └─────────────────────── running ─────────────────┘
//	                                            │
//	               ┌────────────────────────────┼───────────────────┐
//	               ▼                            ▼                   ▼
//	          completed                      failed             cancelled
//
// A workflow parent (see Workflows below) has one more state: running →
// waiting when its handler returns AwaitChildren while steps it spawned are
// unfinished (outcome waiting, no attempt spent, no slot held), and waiting
// → pending when the last of them finishes. A waiting job can be cancelled.
//
// Every claim starts a new attempt and hands the worker a [Lease]. Every write
// a worker makes about a running job (heartbeat, progress, completion,
// failure, snooze) names that lease; a write with a lost lease changes nothing
// and returns [ErrLeaseLost].
//
// # Typed jobs and tests
//
// A [Kind] ties a job kind to the Go type of its arguments, for enqueueing
// and, with [JSONHandler], for handling; [Worker.RunOne] runs one job on
// the caller's behalf. Package queuetest checks what an application
// enqueued (in its transaction, before the commit) and runs a job through
// its handler in a test; docs/library.md shows both.
//
// # Tenants
//
// Every job has a tenant. Within a tenant and queue, jobs start in priority
// then enqueue order. At most a tenant's limit of jobs run at once per queue
// (default 1), enforced by the database across all worker processes, and free
// capacity goes round-robin across tenants that have work. A cancelled job's
// handler keeps its slot until it returns, or until its lease expires if its
// worker died: a retry never runs beside it.
//
// # Inside a worker
//
// Per queue, QueueConfig.Claimers claim loops (default 1) claim jobs in
// batches while the queue has free slots (QueueConfig.MaxWorkers); each loop
// reserves the slots it claims for, so together they never exceed them. Every
// claimed attempt runs its handler on its own goroutine and holds a slot, kept
// per attempt (per lease), until the handler returns. Its outcome goes to the
// completer, whose WorkerConfig.Completers flushers (default 1) store outcomes
// in batches that grow with load. One goroutine renews all leases held. At
// shutdown the worker stops claiming, lets handlers finish within
// ShutdownGrace, cancels the rest and releases their jobs, and stores what is
// left for at most a lease: what it cannot store, the rescuer takes over, as
// when a worker dies. Each attempt's outcome is decided once, so hooks and
// events report it once.
//
// # Workflows
//
// A handler starts child jobs, steps, with [Task.Spawn] (fenced by its
// lease, idempotent per step name) and returns [AwaitChildren] to wait for
// them without holding a slot; it runs again once they have all finished
// and reads their results ([Task.Children]). Steps count against their
// tenant's limit like any job. Cancelling a parent cancels its unfinished
// steps; [Client.Retry] of a failed parent re-opens it and runs its failed
// steps again, keeping the completed ones. See docs/library.md.
//
// # Maintenance and periodic jobs
//
// One worker of a store is elected leader. It runs the sweeps (rescue of
// expired leases, scheduling, retention) and the periodic jobs of
// WorkerConfig.Periodic, cron schedules parsed by [ParseSchedule], through
// one runner: each task has a record in the store, and a periodic job's tick
// is recorded with a compare-and-set in the transaction that enqueues it, so
// it is enqueued once across processes. Late ticks run once, for the latest
// due tick. See docs/periodic.md.
package queue
