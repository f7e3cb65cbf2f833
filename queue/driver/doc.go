// Package driver is the seam between the engine (package queue) and its
// storage drivers, as database/sql/driver is for database/sql: the
// [Driver] and [Executor] interfaces a store implements, the parameters of
// each statement (JobInsertParams, JobClaimParams, JobFinishParams, ...),
// and the rows and errors both sides share (Job, State, Lease, Attempt,
// ErrLeaseLost, ...), which package queue names again for its users.
//
// Applications do not use this package: they hand a driver
// (postgres.Open, sqlite.Open) to queue.NewClient and use the client.
// Driver authors implement it and run the conformance suite in package
// queue/drivertest. The statements and the bookkeeping each keeps
// consistent are tabled in docs/claiming.md.
//
// States: scheduled → pending → running → completed, failed or cancelled,
// with running → pending or scheduled again (retry, snooze, release,
// rescue). A workflow parent also goes running → waiting (JobFinish with
// OutcomeWaiting while it has unfinished children, JobSpawn) and waiting
// → pending when its last unfinished child reaches a final state; a
// waiting job holds no slot and is not claimable.
package driver
