package driver

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// State is where a job is in its life. See the package documentation for
// the state machine.
type State string

// Job states.
const (
	StateScheduled State = "scheduled" // waiting for RunAt (delayed, retry backoff or snooze)
	StatePending   State = "pending"   // ready to be claimed
	StateRunning   State = "running"   // claimed; a worker holds its lease
	StateCompleted State = "completed" // finished successfully
	StateFailed    State = "failed"    // finished unsuccessfully; attempts exhausted, permanent error or discarded
	StateCancelled State = "cancelled" // cancelled before finishing
	// StateWaiting: a workflow parent waits for its unfinished children
	// (it ended an attempt with OutcomeWaiting); it holds no slot and is
	// not claimable, and becomes pending when the last of them finishes.
	StateWaiting State = "waiting"
)

// Finished reports whether s is a terminal state.
func (s State) Finished() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case StateScheduled, StatePending, StateRunning, StateCompleted, StateFailed, StateCancelled, StateWaiting:
		return true
	}
	return false
}

// Job is one unit of work as it is stored.
type Job struct {
	ID          int64
	Queue       string
	Kind        string
	TenantID    string
	Args        json.RawMessage
	State       State
	Priority    int // higher runs first within a tenant
	Attempt     int // number of attempts started so far
	MaxAttempts int
	RunAt       time.Time
	UniqueKey   string // idempotency key, unique per tenant; empty for none
	RetryOf     int64  // the failed job this one retries; 0 for none
	// ParentID is the workflow parent that spawned this job
	// (Executor.JobSpawn); 0 for none. A child has its parent's tenant.
	ParentID int64
	// Cost is what the job weighs in its tenant's fair share (>= 1):
	// the claim serves tenants by cost taken over weight, not by count.
	Cost int

	// FailOnTimeout makes a lease expiry fail the job instead of retrying it.
	FailOnTimeout bool
	// Metadata are string pairs that travel with the job but are not its
	// input, such as the trace context of the request that enqueued it;
	// nil for none.
	Metadata map[string]string

	Stage           string
	Progress        int // percent, 0-100
	ProgressMessage string
	ErrorMessage    string
	Result          json.RawMessage
	// PartialResult is the last partial result a handler reported with
	// its progress (Task.ProgressPartial): what it has found so far, for
	// readers who want it before the job ends. It is kept when the job
	// ends, however it ends, and a later attempt starts with it until it
	// reports its own. Nil for none.
	PartialResult json.RawMessage

	// Lease of the current attempt, set while the job is running.
	LeaseToken     int64
	LeaseExpiresAt time.Time
	// WorkerID names the worker of the current or last attempt.
	WorkerID string

	CreatedAt   time.Time
	StartedAt   time.Time // start of the current or last attempt; zero if never started
	CompletedAt time.Time // zero until finished
	UpdatedAt   time.Time
}

// Lease names one attempt of a running job. Every write a worker makes about
// a running job carries its lease; the store applies it only while the lease
// is still held.
type Lease struct {
	JobID   int64
	Attempt int
	Token   int64
}

// Lease returns the lease of the job's current attempt.
func (j *Job) Lease() Lease {
	return Lease{JobID: j.ID, Attempt: j.Attempt, Token: j.LeaseToken}
}

// Attempt is the record of one finished attempt of a job.
type Attempt struct {
	JobID      int64
	Attempt    int
	WorkerID   string
	StartedAt  time.Time
	FinishedAt time.Time
	Outcome    Outcome
	Error      string
}

// Outcome is how an attempt ended.
type Outcome string

// Attempt outcomes.
const (
	OutcomeCompleted Outcome = "completed" // handler succeeded
	OutcomeRetry     Outcome = "retry"     // handler failed; job scheduled again after a backoff
	OutcomeFailed    Outcome = "failed"    // handler failed; job failed for good
	OutcomeSnoozed   Outcome = "snoozed"   // handler asked to run again later; no attempt spent
	OutcomeReleased  Outcome = "released"  // worker shut down; job back to pending, no attempt spent
	OutcomeTimedOut  Outcome = "timed_out" // lease expired; rescued by the sweep
	OutcomeCancelled Outcome = "cancelled" // cancelled while running
	OutcomeWaiting   Outcome = "waiting"   // handler awaits its children; job waiting (or pending if none is unfinished), no attempt spent
)

// stepKeyPrefix starts the unique key of every workflow step.
const stepKeyPrefix = "docket.step:"

// StepKey is the unique key of the step named name of the workflow parent
// parentID: spawning a step twice (a parent's later attempt, or a retried
// parent) finds the child the first spawn made.
func StepKey(parentID int64, name string) string {
	return stepKeyPrefix + strconv.FormatInt(parentID, 10) + ":" + name
}

// StepName is the step name of a job spawned by Executor.JobSpawn with a
// StepKey, or "" for any other job.
func (j *Job) StepName() string {
	rest, ok := strings.CutPrefix(j.UniqueKey, stepKeyPrefix+strconv.FormatInt(j.ParentID, 10)+":")
	if !ok || j.ParentID == 0 {
		return ""
	}
	return rest
}
