package docket

import "github.com/docketq/docket/queue"

// Sentinel errors. They are the queue's own, so one errors.Is check (and
// one HTTP mapping) covers jobs and documents alike. Drivers translate their
// errors into these.
var (
	// ErrNotFound: no such object for this tenant. An object of another
	// tenant is not found, never forbidden.
	ErrNotFound = queue.ErrNotFound
	// ErrConflict: the object is not in a state that allows the operation.
	ErrConflict = queue.ErrConflict
	// ErrInvalid: the caller passed an invalid argument.
	ErrInvalid = queue.ErrInvalid
	// ErrDuplicate: an object with the same unique name exists (an
	// idempotency key already recorded, a tenant name taken): every unique
	// violation, in the engine's tables too.
	ErrDuplicate = queue.ErrDuplicate
	// ErrUnavailable: the database could not be reached or would not take
	// the statement now (a failover, a restart); the request may be retried.
	ErrUnavailable = queue.ErrUnavailable
)
