package queue

import "github.com/docketq/docket/queue/driver"

// The types below are defined by the driver seam (package driver), which
// both the engine and the storage drivers import; they are the engine's
// API too, so they are named here as well. The seam itself (driver.Driver,
// driver.Executor, the Job*Params of its statements) is only for those
// who write a driver.

// Job is one unit of work as it is stored: see [driver.Job].
type Job = driver.Job

// State is where a job is in its life: see the package documentation for
// the state machine.
type State = driver.State

// Job states.
const (
	StateScheduled = driver.StateScheduled // waiting for RunAt (delayed, retry backoff or snooze)
	StatePending   = driver.StatePending   // ready to be claimed
	StateRunning   = driver.StateRunning   // claimed; a worker holds its lease
	StateCompleted = driver.StateCompleted // finished successfully
	StateFailed    = driver.StateFailed    // finished unsuccessfully; attempts exhausted, permanent error or discarded
	StateCancelled = driver.StateCancelled // cancelled before finishing
	StateWaiting   = driver.StateWaiting   // a workflow parent waiting for its children; holds no slot
)

// Outcome is how an attempt ended.
type Outcome = driver.Outcome

// Attempt outcomes.
const (
	OutcomeCompleted = driver.OutcomeCompleted
	OutcomeFailed    = driver.OutcomeFailed
	OutcomeRetry     = driver.OutcomeRetry
	OutcomeSnoozed   = driver.OutcomeSnoozed
	OutcomeCancelled = driver.OutcomeCancelled
	OutcomeReleased  = driver.OutcomeReleased
	OutcomeTimedOut  = driver.OutcomeTimedOut
	OutcomeWaiting   = driver.OutcomeWaiting
)

// Lease names one attempt of a job: every write of the attempt carries it,
// and a write with a lease no longer held changes nothing (ErrLeaseLost).
type Lease = driver.Lease

// Attempt is the record of one finished attempt of a job.
type Attempt = driver.Attempt

// InsertResult is the result of one enqueue: the job, and whether an
// existing job with the same unique key was returned instead.
type InsertResult = driver.InsertResult

// JobListParams filters and pages Client.List.
type JobListParams = driver.JobListParams

// QueueStats are a queue's counts by state and its recent timings.
type QueueStats = driver.QueueStats

// PeriodicRecord is the stored state of one periodic task.
type PeriodicRecord = driver.PeriodicRecord

// Pauses are the queues and tenants paused now, each with the time its
// pause began (the store's clock).
type Pauses = driver.Pauses

// DatabaseError carries an error of the database itself behind a sentinel:
// see [driver.DatabaseError].
type DatabaseError = driver.DatabaseError

// Sentinel errors; every driver translates its own errors into these.
var (
	// ErrNotFound means the job (or other object) does not exist.
	ErrNotFound = driver.ErrNotFound
	// ErrLeaseLost means the lease named by a write is no longer held: the
	// job was rescued, cancelled or finished by someone else. The write
	// changed nothing.
	ErrLeaseLost = driver.ErrLeaseLost
	// ErrConflict means the job is not in a state that allows the
	// operation (retrying a job that has not failed, cancelling a finished
	// one).
	ErrConflict = driver.ErrConflict
	// ErrInvalid means the caller passed an invalid argument.
	ErrInvalid = driver.ErrInvalid
	// ErrDuplicate means an object with the same unique key exists.
	ErrDuplicate = driver.ErrDuplicate
	// ErrUnavailable means the store could not be reached, or would not
	// take the statement now (a failover, a restart): retry later.
	ErrUnavailable = driver.ErrUnavailable
)

// Defaults used when a field is left zero.
const (
	DefaultQueue       = driver.DefaultQueue
	DefaultMaxAttempts = driver.DefaultMaxAttempts
)

// MaxPartialResultBytes caps a job's partial result (Task.ProgressPartial).
const MaxPartialResultBytes = driver.MaxPartialResultBytes

// ValidateQueueName returns an error wrapping ErrInvalid for a name that is
// not 1 to 63 characters of lowercase letters, digits, '_', '.' and '-'.
func ValidateQueueName(name string) error { return driver.ValidateQueueName(name) }
