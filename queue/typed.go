package queue

import (
	"context"
	"encoding/json"
	"fmt"
)

// JSONHandler returns a Handler that decodes a job's Args into a T with
// encoding/json and calls fn with it, so a handler states the type of its
// input instead of decoding Task.Job.Args itself.
//
// Decoding follows encoding/json's rules: fields of the JSON that T does
// not have are ignored, so that a job enqueued by a newer version of an
// application, with a field added, still runs on a worker not yet
// upgraded (as during a rolling deploy); a field that T lacks in the JSON
// keeps its zero value. Anything else that does not decode (malformed
// JSON, a string where T has a number) fails the job at once, without
// retries (it would fail the same way every time), with an error naming
// the kind, T and the field: "decode args of kind "resize" into
// main.ResizeArgs: json: cannot unmarshal string into Go struct field
// ResizeArgs.width of type int". Check required fields in fn, and return
// Permanent for those that are missing.
func JSONHandler[T any](fn func(ctx context.Context, t *Task, args T) error) Handler {
	return HandlerFunc(func(ctx context.Context, t *Task) error {
		var args T
		if err := decodeArgs(t.Job, &args); err != nil {
			return Permanent(err)
		}
		return fn(ctx, t, args)
	})
}

// decodeArgs decodes job's Args into dst.
func decodeArgs[T any](job *Job, dst *T) error {
	raw := job.Args
	if len(raw) == 0 {
		raw = json.RawMessage("{}") // stored jobs always have args; a Job built by hand may not
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("decode args of kind %q into %T: %w", job.Kind, *dst, err)
	}
	return nil
}

// Kind names a job kind whose arguments are a T, so that the code that
// enqueues its jobs and the handler that runs them agree on the type at
// compile time. Declare one per kind, next to its argument type:
//
//	type ResizeArgs struct {
//		Image string `json:"image"`
//		Width int    `json:"width"`
//	}
//
//	var Resize = queue.Kind[ResizeArgs]{Name: "resize"}
//
// then enqueue with Resize.Enqueue (or Resize.Params, to set a priority,
// a queue or a unique key) and register Resize.Handler(fn) under
// Resize.Name in WorkerConfig.Handlers.
type Kind[T any] struct {
	// Name is the job kind, EnqueueParams.Kind and the key of the
	// kind's handler in WorkerConfig.Handlers.
	Name string
}

// Params returns the parameters of a job of this kind for tenantID with
// args; the other fields are zero (their defaults) for the caller to set
// before passing them to Client.Enqueue or Client.EnqueueTx.
func (k Kind[T]) Params(tenantID string, args T) *EnqueueParams {
	return &EnqueueParams{Kind: k.Name, TenantID: tenantID, Args: args}
}

// Enqueue stores a job of this kind for tenantID with args and the
// default queue, priority and attempts (see Client.Enqueue).
func (k Kind[T]) Enqueue(ctx context.Context, c *Client, tenantID string, args T) (*InsertResult, error) {
	return c.Enqueue(ctx, k.Params(tenantID, args))
}

// EnqueueTx stores a job of this kind inside the caller's transaction
// (see Client.EnqueueTx).
func (k Kind[T]) EnqueueTx(ctx context.Context, c *Client, tx any, tenantID string, args T) (*InsertResult, error) {
	return c.EnqueueTx(ctx, tx, k.Params(tenantID, args))
}

// Handler returns a Handler for jobs of this kind that decodes their
// arguments into a T and calls fn (see JSONHandler).
func (k Kind[T]) Handler(fn func(ctx context.Context, t *Task, args T) error) Handler {
	return JSONHandler(fn)
}

// Args decodes a job's arguments into a T, by the rules of JSONHandler. A
// job of another kind is an error wrapping ErrInvalid.
func (k Kind[T]) Args(job *Job) (T, error) {
	var args T
	if job.Kind != k.Name {
		return args, fmt.Errorf("%w: job %d is of kind %q, not %q", ErrInvalid, job.ID, job.Kind, k.Name)
	}
	if err := decodeArgs(job, &args); err != nil {
		return args, err
	}
	return args, nil
}
