package driver

import "errors"

// Sentinel errors. Drivers translate their own errors into these.
var (
	// ErrNotFound means the job (or other object) does not exist.
	ErrNotFound = errors.New("not found")

	// ErrLeaseLost means the lease named by a write is no longer held: the
	// job was rescued, cancelled or finished by someone else. The write
	// changed nothing.
	ErrLeaseLost = errors.New("lease lost")

	// ErrConflict means the job is not in a state that allows the operation
	// (retrying a job that has not failed, cancelling a finished one).
	ErrConflict = errors.New("conflict with the job's state")

	// ErrInvalid means the caller passed an invalid argument.
	ErrInvalid = errors.New("invalid argument")

	// ErrDuplicate means an object with the same unique key exists: every
	// unique violation of a store is this error, never ErrConflict, which
	// is about an object's state.
	ErrDuplicate = errors.New("already exists")

	// ErrUnavailable means the store could not be reached or would not
	// take the statement now: the connection was refused or lost, the
	// server is shutting down, starting or recovering (as during a
	// failover). Whether the statement took effect is unknown; retry it
	// later, as an idempotent request.
	ErrUnavailable = errors.New("store unavailable")
)

// DatabaseError carries an error of the database itself (a constraint's
// name, SQL text, an SQLSTATE) that a driver translated into a sentinel:
// drivers return fmt.Errorf("%w: %w", ErrDuplicate, &DatabaseError{Err: err}).
// Error returns the database's text, for logs; a layer that answers users
// (the HTTP API) shows the sentinel's meaning instead whenever the chain
// holds a DatabaseError, so no database text reaches them.
type DatabaseError struct{ Err error }

func (e *DatabaseError) Error() string { return e.Err.Error() }
func (e *DatabaseError) Unwrap() error { return e.Err }
