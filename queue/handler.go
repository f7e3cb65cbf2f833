package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Handler runs jobs of one kind. Work returns nil on success; an error
// retries the job with backoff until its attempts run out, unless the error
// is Permanent or a Snooze. The context is cancelled when the lease is lost
// (cause ErrLeaseLost), the kind's timeout passes (cause ErrJobTimeout) or
// the worker shuts down.
type Handler interface {
	Work(ctx context.Context, t *Task) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, t *Task) error

// Work calls f.
func (f HandlerFunc) Work(ctx context.Context, t *Task) error { return f(ctx, t) }

// HandlerConfig registers a handler for a job kind.
type HandlerConfig struct {
	Handler Handler
	// Timeout cancels a handler that runs longer, even while it
	// heartbeats. Zero: no limit.
	Timeout time.Duration
	// Backoff overrides the worker's retry backoff for this kind.
	Backoff Backoff
}

// ErrJobTimeout is the cancellation cause of a handler that ran past its
// kind's timeout.
var ErrJobTimeout = errors.New("job timed out")

// errShutdown is the cancellation cause of handlers still running when the
// shutdown grace period ends.
var errShutdown = errors.New("worker shutting down")

// SnoozeError asks for the job to run again after Delay without spending an
// attempt. Return it with Snooze.
type SnoozeError struct{ Delay time.Duration }

func (e *SnoozeError) Error() string { return fmt.Sprintf("snoozed for %s", e.Delay) }

// Snooze returns an error that makes the job run again after d without
// spending an attempt.
func Snooze(d time.Duration) error { return &SnoozeError{Delay: d} }

// PanicError is the error recorded for a handler that panicked.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack) }
