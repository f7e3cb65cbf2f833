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
package driver
