// Package chaos holds Docket's black-box chaos tests: real worker processes
// (the chaosworker command in cmd/chaosworker) on a throwaway PostgreSQL
// cluster, killed, stopped and poisoned while they work, with the execution
// ledger described below as the oracle.
//
// Every handler records (job_id, attempt, worker_pid, started_at) in the
// executions table before it does anything, and a ledger job inserts
// effects(job_id) in the transaction that completes it. After a full drain
// the checker is Jepsen's total-queue: lost (acknowledged enqueues never
// completed) and unexpected (completions never enqueued) must be empty,
// duplicate executions must all be explained by processes the test killed,
// and every job has exactly one effect.
//
// The tests build the worker once per test process, start children with
// os/exec and signal only the processes they started, by their handles
// (never by name). The smoke variants run in every plain `go test` (skipped
// with -short); the full-size ones need `-tags chaos` (the nightly tier).
package chaos
