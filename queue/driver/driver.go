package driver

import (
	"context"
	"encoding/json"
	"time"
)

// Driver is a storage backend for the engine. Implementations live in their
// own packages (postgres, sqlite) and all pass the conformance suite in
// package queue/drivertest.
type Driver interface {
	// Executor runs statements on the driver's pool, each in its own
	// transaction.
	Executor() Executor

	// UnwrapTx returns an executor bound to the caller's own transaction,
	// whose native type is the driver's (pgx.Tx, *sql.Tx). It returns an
	// error wrapping ErrInvalid for any other type.
	UnwrapTx(tx any) (Executor, error)

	// Notifier returns the cross-process notifier, or nil when the driver
	// has none (the engine then notifies in process only).
	Notifier() Notifier

	// Capabilities says what the driver can do.
	Capabilities() Capabilities

	// Migrate brings the schema up to date. It is safe to call from many
	// processes at once.
	Migrate(ctx context.Context) error

	// Close releases the driver's resources.
	Close() error
}

// Capabilities are the things a driver can or cannot do. The conformance
// suite skips, with the reason, the tests of what a driver lacks.
type Capabilities struct {
	// MultiProcess: several processes may share one store.
	MultiProcess bool
	// Notify: the driver delivers notifications across processes.
	Notify bool
	// SQLEnqueue: the store offers a SQL function that enqueues a job.
	SQLEnqueue bool
}

// Executor is the set of operations the engine needs from a store. Each
// method is atomic: it runs in its own transaction, or in the caller's when
// the executor came from Driver.UnwrapTx or ExecutorTx.
type Executor interface {
	// Begin starts a transaction.
	Begin(ctx context.Context) (ExecutorTx, error)

	// Now reads the store's clock: the one leases expire by, scheduled
	// jobs fall due by and periodic ticks are run by (the maintenance
	// leader compares a task's stored NextRun with it, not with its host's
	// clock, so that leaders on hosts whose clocks disagree run every
	// tick on time).
	Now(ctx context.Context) (time.Time, error)

	// PeriodicExecutor keeps the records of periodic tasks
	// (periodic_driver.go).
	PeriodicExecutor

	// JobInsertMany inserts jobs. A job whose (tenant, unique key) already
	// exists is not inserted; its result names the existing job and has
	// Duplicate set (also under concurrent inserts of the same key). Results
	// are in the order of params. A job with RunAt after the store's now is
	// scheduled, else pending. Inserting a pending job makes its tenant
	// claimable in its queue and notifies TopicInsert with the queue name
	// (at most once per queue per transaction).
	JobInsertMany(ctx context.Context, params []*JobInsertParams) ([]InsertResult, error)

	// JobGet returns one job, or ErrNotFound.
	JobGet(ctx context.Context, id int64) (*Job, error)

	// JobList returns jobs matching params, newest first.
	JobList(ctx context.Context, params *JobListParams) ([]*Job, error)

	// JobClaim claims up to params.Max pending jobs of one queue and starts
	// a new attempt of each: state running, Attempt+1, a fresh random
	// non-zero LeaseToken, LeaseExpiresAt = store clock + LeaseDuration,
	// WorkerID, StartedAt = now, Stage "", Progress 0, ProgressMessage ""
	// (PartialResult is kept: the last one any attempt reported).
	//
	// Rules, all enforced by the store under concurrent claimers in many
	// processes: per tenant and queue, never more than the tenant's limit
	// running; within a tenant, priority (higher first) then id order;
	// across tenants, least recently served first (round-robin), each
	// tenant getting at most ceil(Max / tenants served) jobs per claim;
	// cost independent of the number of pending jobs and of idle tenants.
	//
	// more reports that tenants with work and free slots were left that
	// this claim did not take: held by another transaction at that moment
	// (a claim or a finish in another process; a store with row locks skips
	// them rather than wait), or beyond Max. A claim loop that got fewer
	// jobs than it asked for should claim again soon when more is set,
	// rather than wait for a notification that may never come.
	JobClaim(ctx context.Context, params *JobClaimParams) (jobs []*Job, more bool, err error)

	// JobHeartbeat extends the leases still held (LeaseExpiresAt = store
	// clock + LeaseDuration) and returns them; the others are lost.
	JobHeartbeat(ctx context.Context, params *JobHeartbeatParams) ([]Lease, error)

	// JobProgress stores a running job's stage, percent and message, and
	// its PartialResult when params carry one (nil keeps the stored one),
	// or returns ErrLeaseLost. A partial result that fails
	// ValidatePartialResult, or a percent outside 0..100, is ErrInvalid.
	// It notifies TopicChange.
	JobProgress(ctx context.Context, params *JobProgressParams) error

	// JobFinish ends attempts, each only while its lease is held. For each
	// param it returns nil or ErrLeaseLost, in order. By outcome:
	//   - completed: state completed, CompletedAt now, Result, Progress 100,
	//     ErrorMessage cleared;
	//   - retry: ErrorMessage = Error; scheduled at now+RetryIn, or pending
	//     when RetryIn <= 0;
	//   - failed: state failed, CompletedAt now, ErrorMessage = Error;
	//   - snoozed: Attempt-1 (no attempt spent); scheduled at now+RetryIn, or
	//     pending when RetryIn <= 0;
	//   - released: pending and Attempt-1 (shutdown; no attempt spent);
	//   - waiting: Attempt-1 (no attempt spent); waiting while the job has
	//     unfinished children (JobSpawn), else pending at once.
	// Each clears the lease, frees the tenant's slot, records an Attempt
	// (with the outcome and Error) and notifies TopicChange; none changes
	// the PartialResult.
	//
	// A child (ParentID set) that reaches a final state, here, by JobCancel
	// or by JobRescue, counts down its parent's unfinished children in the
	// same transaction; the last one makes a waiting parent pending (its
	// tenant claimable, as a job woken by JobSchedule) and notifies
	// TopicInsert. Under concurrent ends in many processes a waiting parent
	// becomes pending exactly once.
	JobFinish(ctx context.Context, params []*JobFinishParams) ([]error, error)

	// JobSpawn inserts children of the running job params.Lease names, in
	// one transaction with the check that the lease is held (else
	// ErrLeaseLost, and nothing is inserted). Each child takes the parent's
	// tenant (the params' TenantID is ignored) and ParentID; the others are
	// inserted as by JobInsertMany, so a child whose unique key is taken
	// (StepKey: the parent spawned that step before) is not inserted again
	// and its result has Duplicate set. The parent counts its unfinished
	// children: the new ones are added to it.
	JobSpawn(ctx context.Context, params *JobSpawnParams) ([]InsertResult, error)

	// JobChildren returns the children of a job (ParentID = id) in id order;
	// none for a job without children or no such job.
	JobChildren(ctx context.Context, id int64) ([]*Job, error)

	// JobCancel cancels a scheduled, pending or running job and returns it:
	// state cancelled (failed with ErrorMessage = Reason, or "discarded",
	// when Discard), CompletedAt now. A running job loses its lease and
	// gets an Attempt with outcome cancelled, but keeps its tenant's slot:
	// its handler may still be running. The slot stays taken until
	// JobSlotRelease names the lease (the handler returned) or the lease,
	// as last renewed, expires (JobRescue frees it). Cancelling a running
	// job notifies TopicCancel with the job's id. A waiting job is
	// cancelled too. Cancelling a workflow parent cancels, in the same
	// transaction, its unfinished children (and theirs), each as above. A
	// finished job gives ErrConflict.
	JobCancel(ctx context.Context, params *JobCancelParams) (*Job, error)

	// JobSlotRelease frees the tenant slots that cancelled attempts still
	// hold (see JobCancel), one per lease that names such an attempt
	// (id, attempt and token); other leases are ignored. The worker calls
	// it once the attempt's handler has returned. It returns how many
	// slots it freed.
	JobSlotRelease(ctx context.Context, leases []Lease) (int, error)

	// JobRetry inserts a new pending job that retries a failed or cancelled
	// one (RetryOf set); the original is kept as it is. Otherwise ErrConflict.
	//
	// A workflow parent (a job with children) is re-opened instead, so that
	// its workflow goes on where it stopped: its failed and cancelled
	// children become pending again with their attempts reset (a child
	// that is a workflow parent itself is re-opened so, recursively), and
	// the parent itself, with its attempts reset, waiting while it has
	// unfinished children, else pending. Completed children are kept. A
	// job whose cancelled attempt still holds its slot (JobCancel) keeps
	// its Attempt and has MaxAttempts raised by it instead, so that attempt
	// numbers never repeat while the hold lasts. It returns the parent,
	// with its own id.
	JobRetry(ctx context.Context, params *JobRetryParams) (*Job, error)

	// JobPosition tells where a scheduled or pending job stands in its
	// tenant's queue: Ahead counts the pending jobs of the same queue and
	// tenant that start before it (all of them for a scheduled job). Any
	// other state gives ErrConflict.
	JobPosition(ctx context.Context, id int64) (*Position, error)

	// JobAttempts lists the finished attempts of a job, oldest first.
	JobAttempts(ctx context.Context, id int64) ([]*Attempt, error)

	// JobRescue ends up to Limit attempts whose lease expired by the
	// store's clock: back to pending (keeping its id, so its place in the
	// tenant's queue) when Attempt < MaxAttempts and not FailOnTimeout,
	// else failed with ErrorMessage "Processing timed out". Each frees its
	// slot and records an Attempt with outcome timed_out. It also frees up
	// to Limit slots held by cancelled attempts whose lease expired (their
	// worker died or gave up on the handler). It returns the jobs rescued
	// as they are after the change.
	JobRescue(ctx context.Context, params *JobRescueParams) ([]*Job, error)

	// JobSchedule makes scheduled jobs whose time has come pending and
	// returns how many it moved.
	JobSchedule(ctx context.Context, params *JobScheduleParams) (int, error)

	// JobDeleteFinished deletes up to Limit finished jobs (and their
	// attempts) whose CompletedAt is older than the age for their state (a
	// zero age deletes all of that state) and returns how many it deleted.
	JobDeleteFinished(ctx context.Context, params *JobDeleteFinishedParams) (int, error)

	// TenantLimitSet sets a tenant's concurrency limit in a queue (all
	// queues when Queue is empty). MaxRunning 0 removes the override.
	TenantLimitSet(ctx context.Context, params *TenantLimitParams) error

	// TenantWeightSet sets a tenant's weight in the claim's fair shares
	// (every queue): a tenant of weight w is served w times the cost of
	// one of weight 1. Weight 0 removes the override (weight 1).
	TenantWeightSet(ctx context.Context, params *TenantWeightParams) error

	// QueueConfigSet sets a queue's default tenant limit.
	QueueConfigSet(ctx context.Context, params *QueueConfigParams) error

	// LeaderAttempt elects or re-elects a leader for a name; it returns
	// whether params.LeaderID leads until its TTL.
	LeaderAttempt(ctx context.Context, params *LeaderParams) (bool, error)

	// LeaderResign gives up leadership if held.
	LeaderResign(ctx context.Context, params *LeaderParams) error

	// QueueStats reports counts per state and store health.
	QueueStats(ctx context.Context, queue string) (*QueueStats, error)

	// QueuePauseSet pauses or resumes a queue. While it is paused, JobClaim
	// of the queue claims nothing; inserts, running jobs and every other
	// operation go on. A queue with no jobs can be paused, and stays paused
	// until resumed. Resuming notifies TopicInsert with the queue name.
	QueuePauseSet(ctx context.Context, params *QueuePauseParams) error

	// TenantPauseSet pauses or resumes a tenant in every queue, including
	// queues it gets jobs in later. While it is paused, JobClaim skips it
	// (others are served round-robin as if it had no work) at the same
	// cost as an idle tenant; its pending jobs keep their order. Resuming
	// notifies TopicInsert for each queue where it may have pending jobs.
	TenantPauseSet(ctx context.Context, params *TenantPauseParams) error

	// PauseList returns the paused queues and tenants.
	PauseList(ctx context.Context) (*Pauses, error)
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Notifier delivers notifications across processes. Notifications are hints:
// the engine polls as well, so a lost one costs latency, never a job.
type Notifier interface {
	// Listen delivers every notification on topic to fn until ctx ends,
	// reconnecting by itself. fn must not block. Payloads are queue names
	// (TopicCancel's, job ids).
	Listen(ctx context.Context, topics []string, fn func(topic, payload string)) error
}

// Notification topics.
const (
	TopicInsert = "docket_insert" // payload: queue name; a job became pending
	TopicChange = "docket_change" // payload: queue name; a job changed
	TopicCancel = "docket_cancel" // payload: job id (decimal); a running job was cancelled
)

// JobInsertParams describes a job to insert.
type JobInsertParams struct {
	Queue         string
	Kind          string
	TenantID      string
	Args          json.RawMessage
	Priority      int
	MaxAttempts   int
	RunAt         time.Time // zero: now (the store's clock)
	UniqueKey     string
	RetryOf       int64
	FailOnTimeout bool
	Metadata      map[string]string // nil or empty: none
	Cost          int               // 0: 1; see Job.Cost
}

// JobSpawnParams inserts children of a running job (Executor.JobSpawn).
type JobSpawnParams struct {
	Lease    Lease // the parent's attempt
	Children []*JobInsertParams
}

// InsertResult is the result of inserting one job.
type InsertResult struct {
	Job       *Job
	Duplicate bool // an existing job with the same unique key was returned
}

// JobListParams filters a job listing.
type JobListParams struct {
	TenantID string  // empty: all tenants
	Queue    string  // empty: all queues
	Kind     string  // empty: all kinds
	States   []State // empty: all states
	BeforeID int64   // cursor: only jobs with smaller ids; 0 for none
	Limit    int     // 0: 100
}

// JobClaimParams asks for jobs to run.
type JobClaimParams struct {
	Queue         string
	WorkerID      string
	Max           int
	LeaseDuration time.Duration
	// WaitTurn, when positive, asks the claim to wait up to that long for
	// the other claims of the queue in flight to end before it looks at the
	// tenants, and to hold back new ones while it runs, rather than skip
	// what they hold; past it, the claim goes on as usual. A claim loop
	// sets it after a claim that came back short with more set: the tenants
	// with work were held by other claims. A hint: a store whose claims
	// never contend (SQLite: one writer) ignores it.
	WaitTurn time.Duration
}

// JobHeartbeatParams extends leases.
type JobHeartbeatParams struct {
	Leases        []Lease
	LeaseDuration time.Duration
}

// JobProgressParams reports progress of a running job.
type JobProgressParams struct {
	Lease   Lease
	Stage   string
	Percent int
	Message string
	// PartialResult, when not nil, replaces the job's partial result (a
	// JSON document of at most MaxPartialResultBytes); nil keeps it.
	PartialResult json.RawMessage
	// TxIdleLimit, inside a caller's transaction (the write CompleteTx
	// makes before its finish), is set before the write as
	// JobFinishParams.TxIdleLimit is: the write locks the job's row, and a
	// client cut off right after it must not keep it locked. Zero leaves
	// the session's setting; stores without sessions ignore it.
	TxIdleLimit time.Duration
}

// JobFinishParams ends one attempt.
type JobFinishParams struct {
	Lease    Lease
	Outcome  Outcome // completed, retry, failed, snoozed, released or waiting
	Error    string
	Result   json.RawMessage
	RetryIn  time.Duration // for retry and snoozed: delay from the store's now
	WorkerID string
	// TxIdleLimit, inside a caller's transaction (Task.CompleteTx), is the
	// longest the store lets that transaction sit idle afterwards before
	// it ends the session, rolling the transaction back and releasing the
	// job's row. Without it a client that goes silent (a partition, a
	// stopped process) keeps the row locked, and lease expiry cannot
	// rescue the job, for as long as the server takes to notice. Zero
	// leaves the session's setting; stores without sessions ignore it.
	TxIdleLimit time.Duration
}

// JobCancelParams cancels a job.
type JobCancelParams struct {
	ID       int64
	TenantID string // when set, a job of another tenant is ErrNotFound
	// Discard fails the job ("discarded") instead of cancelling it.
	Discard bool
	Reason  string
}

// JobRetryParams retries a failed job as a new one.
type JobRetryParams struct {
	ID       int64
	TenantID string // when set, a job of another tenant is ErrNotFound
}

// Position is where a pending job stands.
type Position struct {
	Ahead   int // pending jobs of the same tenant and queue that start before it
	Running int // slots of the tenant taken in the queue now: running jobs, and cancelled ones whose handlers have not returned
	Limit   int // the tenant's concurrency limit in the queue
	// AvgDuration is the mean run time of recent completed jobs of the
	// queue; zero when unknown.
	AvgDuration time.Duration
	// Paused: the job's queue or tenant is paused, so it will not start
	// before a resume.
	Paused bool
}

// JobRescueParams bounds one rescue sweep.
type JobRescueParams struct {
	Limit int
}

// JobScheduleParams bounds one scheduling sweep.
type JobScheduleParams struct {
	Limit int
}

// JobDeleteFinishedParams says how long finished jobs are kept.
type JobDeleteFinishedParams struct {
	CompletedAge time.Duration
	FailedAge    time.Duration
	CancelledAge time.Duration
	Limit        int
}

// TenantLimitParams sets a tenant's concurrency limit.
type TenantLimitParams struct {
	TenantID   string
	Queue      string // empty: every queue
	MaxRunning int    // 0 removes the override
}

// TenantWeightParams sets a tenant's weight.
type TenantWeightParams struct {
	TenantID string
	Weight   int // 0 removes the override
}

// QueueConfigParams configures a queue.
type QueueConfigParams struct {
	Queue              string
	DefaultTenantLimit int
}

// LeaderParams names a leadership and a candidate.
type LeaderParams struct {
	Name     string
	LeaderID string
	TTL      time.Duration
}

// QueueStats are counts and health figures for a queue.
type QueueStats struct {
	Queue  string
	Counts map[State]int
	// OldestPendingAge is how long the oldest pending job has waited.
	OldestPendingAge time.Duration
	// DeadTuples is the number of dead rows in the jobs table (PostgreSQL)
	// or of free pages in the database file (SQLite).
	DeadTuples int64
	// OldestXactAge is the age of the oldest open transaction, which holds
	// back vacuum (PostgreSQL).
	OldestXactAge time.Duration
	// Paused: the queue is paused (see QueuePauseSet).
	Paused bool
}
